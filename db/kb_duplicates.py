"""Near-duplicate KB entries: pairs of active entries of one role whose stored passage vectors are almost the
same (``near_duplicates``). The clinic's doctors are shown them (the import report, the console's KB page) so
they can merge or hide one: a near-duplicate runner-up makes the bot decline, or pick between the two close to
a draw (bench/retrieval_shapes_results.md, "Ninth round").

One statement: for every active entry of the role with a vector of the given model, its few nearest neighbours
of the same role and model (a LATERAL nearest-neighbour search; on a large role through the HNSW index), kept
when their cosine is at least the cut. A pair is found from either side, so each is reported once (the lower
code first), most similar first, capped. Cost grows with the role's size: one neighbour search per entry (timed on
faq-val's 12.5k-entry KB by ``bench/bench_kb_duplicates.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from db.types import Executor, connection

# Two entries whose stored passage vectors have a cosine of at least this "may say the same thing". Measured
# in bench/retrieval_shapes_results.md ("Ninth round", answer groups) with the product's e5 embedder on
# faq-val's KB: at 0.975, 24 of 30 pairs read were truly interchangeable for a patient (the rest differ by a
# number, a verb or a negation); at 0.95 only 12 of 30 (there it means "the same subject").
DUPLICATE_COSINE = 0.975
# Nearest neighbours looked at per entry (a pair is found from either of its entries). On faq-val's KB 10 finds
# 2,843 of the 2,860 pairs at the cut (3 finds 2,341): only an entry with more than 10 near copies loses some.
NEIGHBOURS = 10
# Up to this many entries each neighbour search is an exact scan of the role (faq-val's first 500 entries:
# 0.08 s in all; 2,000: 1.5 s, quadratic); above it the HNSW index with a short candidate list (2,000: 0.34 s;
# 12.5k: 3.8 s): the neighbours wanted are very close, and on faq-val's 12.5k entries ef_search 10, 40 and 100
# find the same pairs (the retrieval search's ef_search 400 takes 24 s). bench/bench_kb_duplicates.py.
EXACT_MAX = 500
HNSW_EF_SEARCH = 40
MAX_PAIRS = 200  # pairs returned at most (most similar first); ``NearDuplicates.total`` counts them all


@dataclass(frozen=True, slots=True)
class DuplicatePair:
    """Two active entries of one role that may say the same thing (``a_code`` < ``b_code``)."""

    role: str
    a_id: int
    a_code: str
    a_question: str
    b_id: int
    b_code: str
    b_question: str
    similarity: float  # cosine of the two stored passage vectors


@dataclass(frozen=True, slots=True)
class NearDuplicates:
    """The most similar pairs of a role (at most the limit asked) and how many there are in all."""

    pairs: list[DuplicatePair] = field(default_factory=list)
    total: int = 0


_PAIRS = """
    WITH near AS (
        SELECT LEAST(e.id, n.id) AS a_id, GREATEST(e.id, n.id) AS b_id, max(n.similarity) AS similarity
        FROM kb_entries e
        CROSS JOIN LATERAL (
            SELECT o.id, 1 - (o.embedding <=> e.embedding) AS similarity FROM kb_entries o
            WHERE o.role = $1 AND o.active AND o.embedding IS NOT NULL AND o.embedding_model = $2
              AND o.id <> e.id
            ORDER BY {order} LIMIT $3
        ) n
        WHERE e.role = $1 AND e.active AND e.embedding IS NOT NULL AND e.embedding_model = $2
          AND n.similarity >= $4
        GROUP BY 1, 2
    )
    SELECT count(*) OVER () AS total, near.similarity, a.id AS a_id, a.code AS a_code, a.question AS a_question,
           b.id AS b_id, b.code AS b_code, b.question AS b_question
    FROM near JOIN kb_entries a ON a.id = near.a_id JOIN kb_entries b ON b.id = near.b_id
    ORDER BY near.similarity DESC, LEAST(a.code, b.code), GREATEST(a.code, b.code)
    LIMIT $5
"""


async def near_duplicates(
    db: Executor,
    role: str,
    *,
    model: str,
    cut: float = DUPLICATE_COSINE,
    limit: int = MAX_PAIRS,
    role_size: int | None = None,
    timeout_s: float | None = None,
) -> NearDuplicates:
    """Pairs of active entries of ``role`` whose vectors made by ``model`` have a cosine ≥ ``cut``, each pair
    once, most similar first, at most ``limit`` (and the number of all of them). Entries without a vector of
    ``model`` are not compared.

    ``role_size`` (the role's active entries, counted when not given) picks the plan: up to ``EXACT_MAX`` each
    neighbour search is exact; above it, the HNSW index with pgvector's iterative scan (a role filter would
    otherwise starve the index scan). ``timeout_s`` caps the work: past it PostgreSQL cancels the statement
    and ``asyncpg.QueryCanceledError`` is raised.
    """
    async with connection(db) as conn, conn.transaction():
        if role_size is None:
            role_size = int(
                await conn.fetchval(
                    "SELECT count(*) FROM kb_entries WHERE role = $1 AND active AND embedding_model = $2",
                    role,
                    model,
                )
            )
        settings = []
        if timeout_s is not None:
            settings.append(f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}")
        if role_size <= EXACT_MAX:
            order = "similarity DESC"  # ordering by the expression keeps the planner off the HNSW index
        else:
            order = "o.embedding <=> e.embedding"
            settings += [
                "SET LOCAL hnsw.iterative_scan = relaxed_order",
                f"SET LOCAL hnsw.ef_search = {HNSW_EF_SEARCH}",
                "SET LOCAL enable_seqscan = off",
            ]
        if settings:
            await conn.execute("; ".join(settings))
        rows = await conn.fetch(_PAIRS.format(order=order), role, model, NEIGHBOURS, cut, limit)
    pairs = []
    for r in rows:
        a, b = ("a", "b") if r["a_code"] <= r["b_code"] else ("b", "a")  # the lower code first
        pairs.append(
            DuplicatePair(
                role=role,
                a_id=int(r[f"{a}_id"]),
                a_code=r[f"{a}_code"],
                a_question=r[f"{a}_question"],
                b_id=int(r[f"{b}_id"]),
                b_code=r[f"{b}_code"],
                b_question=r[f"{b}_question"],
                similarity=float(r["similarity"]),
            )
        )
    return NearDuplicates(pairs, int(rows[0]["total"]) if rows else 0)
