"""Helpers shared by the test suite (``tests/``) and the benchmarks (``bench/``); dev-only, not in the wheel.

* ``testkit.fakes`` — local HTTP stand-ins for the network services we don't own (Telegram Bot API, Zalo
  OpenAPI, an OpenAI-compatible server and the scripted chat model the LLM benchmark drives through it);
* ``testkit.database`` — the embedded PostgreSQL the suite and the benchmarks create their databases on;
* ``testkit.bot_process`` — ``medbot run`` as a real subprocess against the fake Bot API.

Nothing here mocks our own code: the fakes speak real HTTP, the database is a real PostgreSQL.
"""
