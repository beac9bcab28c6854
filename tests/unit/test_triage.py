"""Emergency triage: the rules file, recall and false alarms on labelled sets the rules were not tuned on,
invisible characters, and what the answer tells a frightened family member to do."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.triage import answer, default_model, default_rules, parse_rules, triage
from engine.triage.evaluation import evaluate, load_labelled
from engine.triage.model import DATA_DIR, DOUBT
from engine.triage.normalize import untelex
from engine.triage.rules import RULES_FILE

DATA = Path(__file__).parents[1] / "data"
LABELLED = DATA_DIR  # the sets the rules were tuned on and the model learns from
# Held out: written by an author who never saw the rules, never tuned on (docs/triage.md: how each set was made).
HELD_OUT = DATA / "triage_heldout.jsonl"
# Between a freeze and the measurement the next blind set is still being written: no held-out file then.
TEST_SET = load_labelled(HELD_OUT) if HELD_OUT.is_file() else []
needs_held_out = pytest.mark.skipif(
    not HELD_OUT.is_file(), reason="the next blind held-out set is not installed yet"
)
DEV_SET = load_labelled(LABELLED / "dev.jsonl")
TUNED = {  # every emergency in them is caught
    "dev A": DEV_SET,
    "dev A2": load_labelled(LABELLED / "dev2.jsonl"),
    "dev B": load_labelled(LABELLED / "dev3.jsonl"),
    "session 1": load_labelled(LABELLED / "session1.jsonl"),
    # the fifth held-out set (author E), measured once (rules + model 317/348, 8/351), then tuned on
    "dev E": load_labelled(LABELLED / "dev6.jsonl"),
    # the sixth held-out set (author G), measured once (rules + model 369/392, 16/395), then tuned on
    "dev G": load_labelled(LABELLED / "dev7.jsonl"),
    # the seventh held-out set (author H), measured once (rules + model 404/455, 14/382), then tuned on
    "dev H": load_labelled(LABELLED / "dev8.jsonl"),
    # the eighth held-out set (author I), measured once (rules + model 410/449, 9/401), then tuned on
    "dev I": load_labelled(LABELLED / "dev9.jsonl"),
    # the ninth held-out set (author J), measured once (rules + model 385/406, 10/395), then tuned on
    "dev J": load_labelled(LABELLED / "dev10.jsonl"),
    # the tenth held-out set (v9, author K), measured once (rules + model 356/366, 10/346), then tuned on
    "dev K": load_labelled(LABELLED / "dev11.jsonl"),
    # the eleventh held-out set (v10, author L), measured once (rules + model 396/411, 22/389), then tuned on
    "dev L": load_labelled(LABELLED / "dev12.jsonl"),
    # the twelfth held-out set (v11, author M), measured once at 15531f0 (rules + model 360/384, 21/372), then tuned on
    "dev M": load_labelled(LABELLED / "dev13.jsonl"),
    # the thirteenth held-out set (v12, author N), measured once at 15531f0 (rules + model 399/416, 17/384), then
    # tuned on
    "dev N": load_labelled(LABELLED / "dev14.jsonl"),
    # the fourteenth held-out set (v13, author O), measured once at d83247a (rules + model 359/376, 10/370), then
    # tuned on
    "dev O": load_labelled(LABELLED / "dev15.jsonl"),
    # the fifteenth held-out set (v14, author P), measured once at d83247a (rules + model 371/392, 13/368), then
    # tuned on
    "dev P": load_labelled(LABELLED / "dev16.jsonl"),
    # the sixteenth held-out set (v15, author Q), measured once at 9f46c17 (rules + model 363/379, 9/360), then
    # tuned on
    "dev Q": load_labelled(LABELLED / "dev17.jsonl"),
    # the seventeenth held-out set (v16, author R), measured once at 9f46c17 (rules + model 376/405, 11/372), then
    # tuned on
    "dev R": load_labelled(LABELLED / "dev18.jsonl"),
    # the eighteenth held-out set (v17, author S), measured once at ffa4af4 (rules + model 388/397, 19/393), then
    # tuned on
    "dev S": load_labelled(LABELLED / "dev19.jsonl"),
    # the nineteenth held-out set (v18, author T), measured once at ffa4af4 (rules + model 391/404, 21/388), then
    # tuned on
    "dev T": load_labelled(LABELLED / "dev20.jsonl"),
    # the twentieth held-out set (v19, author U), measured once at 6c46241 (rules + model 397/409, 8/376), then
    # tuned on
    "dev U": load_labelled(LABELLED / "dev21.jsonl"),
    # the twenty-first held-out set (v20, author V), measured once at 6c46241 (rules + model 402/415, 8/389), then
    # tuned on
    "dev V": load_labelled(LABELLED / "dev22.jsonl"),
    # the twenty-second held-out set (v21, author W), measured once at 6f52c53 (rules + model 361/383, 14/386), then
    # tuned on
    "dev W": load_labelled(LABELLED / "dev23.jsonl"),
    # the twenty-third held-out set (v22, author X, terse and clinical), measured once at 6f52c53 (rules + model
    # 342/396, 10/397), then tuned on
    "dev X": load_labelled(LABELLED / "dev24.jsonl"),
    # the twenty-fourth held-out set (v23, author Y, terse SMS and clinical), measured once at 5f8f2e7 (rules + model
    # 285/318, 6/320), then tuned on
    "dev Y": load_labelled(LABELLED / "dev25.jsonl"),
    # the twenty-fifth held-out set (v24, author Z, mid-conversation follow-ups), measured once at 5f8f2e7 (rules +
    # model 302/310, 12/325), then tuned on
    "dev Z": load_labelled(LABELLED / "dev26.jsonl"),
    # the twenty-sixth held-out set (v25, author AA, teenagers and young adults in teencode), measured once at
    # 963ea90 (rules + model 307/320, 10/322), then tuned on
    "dev AA": load_labelled(LABELLED / "dev27.jsonl"),
    # the twenty-seventh held-out set (v26, author AB, Southern and Central speakers, older people with chronic
    # illness), measured once at 963ea90 (rules + model 302/310, 9/319), then tuned on
    "dev AB": load_labelled(LABELLED / "dev28.jsonl"),
    # the twenty-eighth held-out set (v27, author AC, typing badly in a hurry: typos, run-together words, Telex
    # leftovers, dropped English endings), measured once at 540c506 (rules + model 291/310, 4/320), then tuned on
    # (rounds 11 and 12)
    "dev AC": load_labelled(LABELLED / "dev29.jsonl"),
    # the twenty-ninth held-out set (v28, author AD, medicines at home), measured once at 540c506 (rules + model
    # 301/310, 10/324), then tuned on (rounds 11 and 12)
    "dev AD": load_labelled(LABELLED / "dev30.jsonl"),
    # the thirtieth held-out set (v29, author AE, every message typed messily: typos inside the key words, Telex
    # leftovers, words run together), measured once at 7987cc8 (rules alone 259/310; rules + model 278/310, 7/329),
    # then tuned on
    "dev AE": load_labelled(LABELLED / "dev31.jsonl"),
    # the thirty-first held-out set (v30, author AF, farmers, fishermen and workers in the provinces), measured once
    # at 7987cc8 (rules alone 291/310; rules + model 305/310, 13/321), then tuned on
    "dev AF": load_labelled(LABELLED / "dev32.jsonl"),
    # the thirty-second held-out set (v31, author AG, parents, teachers, school nurses and coaches), measured once at
    # 390bedf (rules alone 295/310; rules + model 302/310, 14/335), then tuned on
    "dev AG": load_labelled(LABELLED / "dev33.jsonl"),
    # the thirty-third held-out set (v32, author AH, older people and caregivers dictating by voice-to-text, Vietnamese
    # back from abroad switching languages), measured once at 390bedf (rules alone 290/310; rules + model 301/310,
    # 9/319), then tuned on
    "dev AH": load_labelled(LABELLED / "dev34.jsonl"),
    # the thirty-fourth held-out set (v33, author AI, tourists, expats and the hotel staff, guides and drivers around
    # them), measured once at c811995 (rules alone 290/310; rules + model 299/310, 7/320), then tuned on
    "dev AI": load_labelled(LABELLED / "dev35.jsonl"),
    # the thirty-fifth held-out set (v34, author AJ, city office workers: drinking sessions, karaoke, energy drinks,
    # gyms, overwork), measured once at c811995 (rules alone 303/310; rules + model 305/310, 7/322), then tuned on
    "dev AJ": load_labelled(LABELLED / "dev36.jsonl"),
    # the thirty-sixth held-out set (v35, author AK, pregnant and postpartum women, their families, village midwives
    # and health workers), measured once at 9012c40 (rules alone 289/310; rules + model 297/310, 6/322), then tuned on
    "dev AK": load_labelled(LABELLED / "dev37.jsonl"),
    # the thirty-seventh held-out set (v36, author AL, people with disabilities and their carers, ethnic-minority
    # speakers writing Vietnamese as a second language, hospital and care-home night staff), measured once at 9012c40
    # (rules alone 283/310; rules + model 299/310, 3/322), then tuned on
    "dev AL": load_labelled(LABELLED / "dev38.jsonl"),
    # the thirty-eighth held-out set (v37, author AM, pharmacists and drugstore staff writing for a customer at the
    # counter, families using folk and traditional remedies), measured once at 297c41d (rules alone 302/310; rules +
    # model 308/310, 5/340), then tuned on
    "dev AM": load_labelled(LABELLED / "dev39.jsonl"),
    # the thirty-ninth held-out set (v38, author AN, children of 8-14 writing for someone at home, neighbours of old
    # people living alone), measured once at 297c41d (rules alone 284/310; rules + model 295/310, 7/319), then tuned on
    "dev AN": load_labelled(LABELLED / "dev40.jsonl"),
    # the forty-fourth held-out set (v43, author AS, family and neighbourhood group chats), measured once at 6e279cc
    # (rules alone 301/310; rules + model 307/310, 13/333), then tuned on (round 19)
    "dev AS": load_labelled(LABELLED / "dev45.jsonl"),
    # the forty-fifth held-out set (v44, author AT, people hours from a hospital), measured once at 6e279cc (rules
    # alone 298/310; rules + model 307/310, 12/332), then tuned on (round 19)
    "dev AT": load_labelled(LABELLED / "dev46.jsonl"),
    # the forty-sixth to forty-ninth held-out sets, measured once at aa52924 (round 19), then tuned on (round 20):
    # v45 (author AU, festivals and family gatherings): rules alone 299/310, rules + model 309/310, false alarms 8/328
    "dev AU": load_labelled(LABELLED / "dev47.jsonl"),
    # v46 (author AV, replies to the clinic's reminders and follow-ups): 303/310, 310/310, 3/325
    "dev AV": load_labelled(LABELLED / "dev48.jsonl"),
    # v47 (author AW, late at night and in the small hours): 299/310, 307/310, 6/322
    "dev AW": load_labelled(LABELLED / "dev49.jsonl"),
    # v48 (author AX, Facebook-group posts: shared news, warnings, ads): 305/310, 309/310, 35/342
    "dev AX": load_labelled(LABELLED / "dev50.jsonl"),
    # the fiftieth and fifty-first held-out sets, measured once at 74e4ce0 (round 20), then tuned on (round 21):
    # v49 (author AY, people at work writing about a colleague, a customer or themselves): rules alone 294/310, rules +
    # model 304/310, false alarms 5/324
    "dev AY": load_labelled(LABELLED / "dev51.jsonl"),
    # v50 (author AZ, salons, spas and cosmetic clinics, gyms, pools and sports grounds): 281/310, 305/310, 5/324
    "dev AZ": load_labelled(LABELLED / "dev52.jsonl"),
    "templates": load_labelled(LABELLED / "templates.jsonl"),  # make_templates.py, for the model
}
# The held-out set: v218-v221 (authors HL, HM, HN, HO: highland villages of the far North and Northwest; adult children
# watching elderly parents alone at home through cameras, watches and calls; the Tet holiday week; primary and secondary
# schools), written blind while round 64 ran. Measured once at dfe4847 (rounds 61-63): 1,231/1,240, 16/1,320 (rules alone
# 1,170, 37); rounds 64-65 (written without them): 1,231/1,240, 17/1,320 (a worry about a grandmother taking the wrong
# pills, asking for a pillbox that locks, read as poisoning by a round 64 rule). The held-out tests before them (v206-v209, v190-v193, v182-v185, v174-v177, v162-v165) are dev211-dev214,
# dev203-dev206, dev187-dev190, dev175-dev178 and dev163-dev166.
HELD_OUT_RECALL = 0.9927
HELD_OUT_FALSE_ALARMS = 0.0129
AUTHORS = load_labelled(LABELLED / "authors.jsonl")  # the rule authors' own rows, written before each change
DEV_C = load_labelled(LABELLED / "dev4.jsonl")  # the third held-out set: measured once, then learnt from
DEV_D = load_labelled(LABELLED / "dev5.jsonl")  # the fourth: measured once, then tuned on and learnt from
# The fortieth and forty-first held-out sets (v39, author AO; v40, author AP), measured once at 63d4b56 (rules alone
# 293/310 and 294/310; rules + model 304/310, 9/319 and 301/310, 10/326), then learnt from by the model only: round 17
# wrote no rules for them (docs/triage.md, "Round 17").
DEV_AO = load_labelled(LABELLED / "dev41.jsonl")
DEV_AP = load_labelled(LABELLED / "dev42.jsonl")
# The forty-second and forty-third held-out sets (v41, author AQ; v42, author AR), measured once at 221815c (rules
# alone 285/310 and 297/310; rules + model 294/310, 8/323 and 308/310, 9/339), then learnt from; round 18 fixed the one
# rule behind most of v41's misses ("caller says her husband…" read as hearsay) and wrote no other.
DEV_AQ = load_labelled(LABELLED / "dev43.jsonl")
DEV_AR = load_labelled(LABELLED / "dev44.jsonl")
# The fifty-second to fifty-fifth held-out sets, measured once at 8551619 (round 21), then tuned on and learnt from
# (round 22), guarded at what they give after it: v51 (author BA, carers of people seriously ill at home): rules alone
# 292/310, rules + model 307/310, false alarms 9/326; v52 (author BB, Vietnamese-English code-switching): 297/310,
# 307/310, 9/339; v53 (author BC, people who understate and bury the danger): 288/310, 304/310, 8/338; v54 (author BD,
# Mekong Delta and central-coast dialect typed by sound): 285/310, 300/310, 11/340. After round 22, rules + model:
# 310/310 each, false alarms 2/326, 4/339, 6/338, 7/340 (rules alone 309, 307, 303, 308 of 310).
DEV_BA = load_labelled(LABELLED / "dev53.jsonl")
DEV_BB = load_labelled(LABELLED / "dev54.jsonl")
DEV_BC = load_labelled(LABELLED / "dev55.jsonl")
DEV_BD = load_labelled(LABELLED / "dev56.jsonl")
# The fifty-sixth and fifty-seventh held-out sets, measured once at 7a8fb21 (round 22), then learnt from by the model
# (round 23): v55 (author BE, the northern Red River delta typed as it sounds): rules alone 294/310, rules + model
# 308/310, false alarms 11/330; v56 (author BF, young people under pressure, dark humour and venting): 292/310,
# 309/310, 10/330. Guarded at what they give after it.
DEV_BE = load_labelled(LABELLED / "dev57.jsonl")
DEV_BF = load_labelled(LABELLED / "dev58.jsonl")
# The fifty-eighth to sixty-first held-out sets, then tuned on and learnt from (round 25), guarded at what they give
# after it: v58 (author BG, people aged 60-85, many dictating by speech-to-text) and v59 (author BH, Vietnamese as a
# second or rusty language), measured once at 6713972 (round 23): rules + model 305/310, 12/330 and 306/310, 13/330;
# again at a4e5f3a (round 24): 305/310, 10/330 and 304/310, 11/330. v60 (author BI, messages pasted or forwarded:
# group-chat logs, quoted relatives) and v61 (author BJ, people on the road), measured once at a4e5f3a: rules alone
# 286/310 and 287/310, rules + model 304/310, 8/330 and 309/310, 10/330. After round 25, rules + model: 310/310 each,
# false alarms 3/330, 6/330, 3/330, 3/330 (rules alone 299, 286, 292, 293 of 310).
DEV_BG = load_labelled(LABELLED / "dev59.jsonl")
DEV_BH = load_labelled(LABELLED / "dev60.jsonl")
DEV_BI = load_labelled(LABELLED / "dev61.jsonl")
DEV_BJ = load_labelled(LABELLED / "dev62.jsonl")
# The sixty-second and sixty-third held-out sets, then tuned on and learnt from (round 26), guarded at what they give
# after it: v62 (author BK, nightlife, alcohol and drugs) and v63 (author BL, storm and flood season), measured once at
# 961ba9e (round 24's rules and model): rules alone 289/310 and 288/310, rules + model 308/310, 12/330 and 304/310,
# 14/330. After round 26, rules + model: 310/310 each, false alarms 6/330 and 4/330 (rules alone 290 and 293 of 310).
DEV_BK = load_labelled(LABELLED / "dev63.jsonl")
DEV_BL = load_labelled(LABELLED / "dev64.jsonl")
# The sixty-fourth to sixty-seventh held-out sets, then tuned on and learnt from (round 27), guarded at what they give:
# v64 (author BM, farm and harvest season) and v65 (author BN, angry and sarcastic writers), measured once at adce391
# (round 25's rules and model): rules + model 616/620, 16/660; v66 (author BO, summer holidays, children minded by
# others) and v67 (author BP, health-literate relatives), measured once at cb9d4e2 (round 26): 617/620, 15/660. After
# round 27, rules + model: 310/310 each, false alarms 1, 2, 1 and 1 of 330 (rules alone 303, 306, 300 and 303 of 310).
DEV_BM = load_labelled(LABELLED / "dev65.jsonl")
DEV_BN = load_labelled(LABELLED / "dev66.jsonl")
DEV_BO = load_labelled(LABELLED / "dev67.jsonl")
DEV_BP = load_labelled(LABELLED / "dev68.jsonl")
# The sixty-eighth to seventy-first held-out sets, then tuned on and learnt from (round 28), guarded at what they give:
# v68 (author BQ, older adults, many dictating by voice) and v69 (author BR, young factory workers, teen code),
# measured once at b9de2fc (round 26's rules and model): rules + model 307/310, 7/330 and 309/310, 6/330; v70 (author
# BS, school and kindergarten staff) and v71 (author BT, terse one-line messages), measured once at dca1f11 (round
# 27): 307/310, 4/330 and 303/310, 4/330. After round 28, rules + model: 310/310 each, false alarms 0, 0, 1 and 0 of
# 330 (rules alone 293, 302, 294 and 291 of 310).
DEV_BQ = load_labelled(LABELLED / "dev69.jsonl")
DEV_BR = load_labelled(LABELLED / "dev70.jsonl")
DEV_BS = load_labelled(LABELLED / "dev71.jsonl")
DEV_BT = load_labelled(LABELLED / "dev72.jsonl")
# The seventy-second and seventy-third held-out sets, then tuned on and learnt from (round 29), guarded at what they
# give: v72 (author BU, pregnancy and the "ở cữ" month) and v73 (author BV, fishing and island communities), measured
# once at dc1e034 (round 27's rules and model): rules + model 309/310, 7/330 and 308/310, 10/330; round 28 617/620,
# 15/660 together; after round 29 310/310, 1/330 and 310/310, 0/330.
DEV_BU = load_labelled(LABELLED / "dev73.jsonl")
DEV_BV = load_labelled(LABELLED / "dev74.jsonl")
# The seventy-fourth to seventy-seventh blind sets, then tuned on and learnt from (round 30), guarded at what they
# give: v74 (author BW, Vietnamese people working and studying abroad) and v75 (author BX, market traders and
# street-food sellers), measured once at a5675ef (round 28's rules and model): rules + model 310/310, 4/330 and
# 308/310, 8/330; v76 (author BY, religious and community life) and v77 (author BZ, city apartment towers), measured
# at the same freeze: 308/310, 7/330 and 308/310, 6/330; round 29 (written without them) 618/620, 12/660 and 616/620,
# 12/660; after round 30 310/310 each, 2, 4, 3 and 2 of 330.
DEV_BW = load_labelled(LABELLED / "dev75.jsonl")
DEV_BX = load_labelled(LABELLED / "dev76.jsonl")
DEV_BY = load_labelled(LABELLED / "dev77.jsonl")
DEV_BZ = load_labelled(LABELLED / "dev78.jsonl")
# The seventy-eighth to eighty-first held-out sets, then tuned on and learnt from (round 31), guarded at what they
# give: v78 (author CA, people who live on their phones for work) and v79 (author CB, the Central Highlands and the
# northern mountains), measured once at ba25799 (round 29's rules and model): 614/620, 13/660 together; round 30 and
# the context work 615/620, 12/660; v80 (author CC, soldiers, police and their families) and v81 (author CD, fathers
# and grandfathers minding children), measured once at 2635803 (round 30 and the context work): 614/620, 4/660. With
# the model retrained on them, before round 31's rules: 308/310, 6/330; 308/310, 6/330; 309/310, 1/330; 307/310,
# 3/330; after round 31: 310/310 each, 5, 5, 0 and 1 of 330.
DEV_CA = load_labelled(LABELLED / "dev79.jsonl")
DEV_CB = load_labelled(LABELLED / "dev80.jsonl")
DEV_CC = load_labelled(LABELLED / "dev81.jsonl")
DEV_CD = load_labelled(LABELLED / "dev82.jsonl")
# The eighty-second to eighty-fifth held-out sets, then tuned on and learnt from (round 32), guarded at what they
# give: v82 (author CE, tourism: homestay hosts, guides, hotel staff and their guests), v83 (author CF, neighbourhood
# pharmacy counters relaying customers), v84 (author CG, grown children following a parent from afar by home camera
# and video calls), v85 (author CH, the first days after a hospital stay, an operation or a birth), measured once at
# aab700b (round 30 and the context work): 1,227/1,240, 27/1,320 together; the model trained with neutral
# surroundings (0be8e99) 1,229/1,240, 22/1,320; after round 32 1,240/1,240, 5/1,320 (rules alone 1,182/1,240, 20/1,320).
DEV_CE = load_labelled(LABELLED / "dev83.jsonl")
DEV_CF = load_labelled(LABELLED / "dev84.jsonl")
DEV_CG = load_labelled(LABELLED / "dev85.jsonl")
DEV_CH = load_labelled(LABELLED / "dev86.jsonl")
# The eighty-sixth to eighty-ninth held-out sets, then tuned on and learnt from (round 33), guarded at what they give:
# v86 (author CJ, the clinic's own staff: receptionists, chair-side assistants, nurses, the driver), v87 (author CK,
# families who tried folk remedies first), v88 (author CL, paid carers and nursing-home night staff), v89 (author CM,
# students in dormitories and rented rooms and their parents), measured once at 0be8e99: 1,221/1,240, 29/1,320
# together; round 32 and the model augmented at half (734e560) 1,222/1,240, 28/1,320; the model retrained on them
# 1,231/1,240, 24/1,320; after round 33's first batch 1,237/1,240, 24/1,320 (rules alone 1,144/1,240, 39/1,320).
DEV_CJ = load_labelled(LABELLED / "dev87.jsonl")
DEV_CK = load_labelled(LABELLED / "dev88.jsonl")
DEV_CL = load_labelled(LABELLED / "dev89.jsonl")
DEV_CM = load_labelled(LABELLED / "dev90.jsonl")
# The ninetieth to ninety-third held-out sets, then tuned on and learnt from (round 34), guarded at what they give: v90
# (author CN, building sites and small workshops), v91 (author CO, family occasions: weddings, funerals, Tết), v92
# (author CP, people living with diabetes for many years), v93 (author CQ, typed in a hurry or a panic), measured once
# at 734e560: 1,235/1,240, 20/1,320 together; round 33 (f860529) the same emergencies, 19/1,320; the model retrained
# on them 1,236/1,240, 17/1,320; round 34 1,240/1,240, 5/1,320.
DEV_CN = load_labelled(LABELLED / "dev91.jsonl")
DEV_CO = load_labelled(LABELLED / "dev92.jsonl")
DEV_CP = load_labelled(LABELLED / "dev93.jsonl")
DEV_CQ = load_labelled(LABELLED / "dev94.jsonl")
# The ninety-fourth to hundred-and-fifth held-out sets, then tuned on and learnt from (round 35), guarded at what they
# give: v94 (author CR, grandparents raising grandchildren), v95 (CS, delivery riders and drivers), v96 (CT, dialysis,
# chemotherapy, home oxygen, blood thinners), v97 (CU, voice typing), v98 (CV, live-in helpers and nannies), v99 (CW,
# restaurant and hotel kitchens), v100 (CX, families of people with mental illness), v101 (CY, village health
# workers), v102 (CZ, parents of newborns and premature babies), v103 (DA, trekking and camping), v104 (DB, security
# guards and night watchmen), v105 (DC, a formal, administrative register). v94-v101 measured once at f860529, v102-v105
# once at e54a414; with round 34 all twelve 3,692/3,720, 56/3,960; the model retrained on them 3,704, 51; round 35
# 3,719/3,720, 46/3,960.
DEV_CR = load_labelled(LABELLED / "dev95.jsonl")
DEV_CS = load_labelled(LABELLED / "dev96.jsonl")
DEV_CT = load_labelled(LABELLED / "dev97.jsonl")
DEV_CU = load_labelled(LABELLED / "dev98.jsonl")
DEV_CV = load_labelled(LABELLED / "dev99.jsonl")
DEV_CW = load_labelled(LABELLED / "dev100.jsonl")
DEV_CX = load_labelled(LABELLED / "dev101.jsonl")
DEV_CY = load_labelled(LABELLED / "dev102.jsonl")
DEV_CZ = load_labelled(LABELLED / "dev103.jsonl")
DEV_DA = load_labelled(LABELLED / "dev104.jsonl")
DEV_DB = load_labelled(LABELLED / "dev105.jsonl")
DEV_DC = load_labelled(LABELLED / "dev106.jsonl")
# The hundred-and-sixth to hundred-and-ninth held-out sets, then tuned on and learnt from (round 36), guarded at what
# they give: v106 (author DD, parents of children living with type 1 diabetes, asthma, epilepsy or a heart defect), v107
# (DE, the hours and days after dental surgery), v108 (DF, neighbours, landlords, boarding-house tenants and
# passers-by), v109 (DG, volunteer roadside-rescue and first-aid groups). Measured once at 7fa6389: 1,230/1,240,
# 28/1,320; round 35 (267c571) 1,231/1,240, 27/1,320; rules alone 1,166, 48; the model retrained on them 1,234/1,240,
# 24/1,320.
DEV_DD = load_labelled(LABELLED / "dev107.jsonl")
DEV_DE = load_labelled(LABELLED / "dev108.jsonl")
DEV_DF = load_labelled(LABELLED / "dev109.jsonl")
DEV_DG = load_labelled(LABELLED / "dev110.jsonl")
# The hundred-and-tenth to hundred-and-thirteenth held-out sets, then tuned on and learnt from (round 37), guarded at
# what they give: v110 (author DH, young people gaming late in internet cafés and rented rooms), v111 (DI, people in
# transit: planes, sleeper buses, trains, ferries), v112 (DJ, homes with family conflict or domestic violence), v113
# (DK, big crowds and celebrations). Measured once at 6e6056d (round 35): 1,229/1,240, 17/1,320; rules alone 1,160, 29;
# round 36 (87e4c16) 1,229/1,240, 16/1,320; rules alone 1,161, 29; the model retrained on them 1,235/1,240, 12/1,320;
# round 37 1,240/1,240, 9/1,320; rules alone 1,172, 26.
DEV_DH = load_labelled(LABELLED / "dev111.jsonl")
DEV_DI = load_labelled(LABELLED / "dev112.jsonl")
DEV_DJ = load_labelled(LABELLED / "dev113.jsonl")
DEV_DK = load_labelled(LABELLED / "dev114.jsonl")
# The hundred-and-fourteenth to hundred-and-seventeenth held-out sets, then tuned on and learnt from (round 38), guarded
# at what they give: v114 (author DL, the typhoon and flood season on the central coast), v115 (DM, nightlife), v116
# (DN, farm and orchard life), v117 (DO, endurance sport). Measured once at 7b029ca (round 36): 1,229/1,240, 19/1,320;
# rules alone 1,154, 40; round 37 (written without them) the same verdict on every message; the model retrained on them
# 1,233/1,240, 18/1,320; round 38 1,240/1,240, 16/1,320; rules alone 1,166, 36.
DEV_DL = load_labelled(LABELLED / "dev115.jsonl")
DEV_DM = load_labelled(LABELLED / "dev116.jsonl")
DEV_DN = load_labelled(LABELLED / "dev117.jsonl")
DEV_DO = load_labelled(LABELLED / "dev118.jsonl")
# The hundred-and-eighteenth to hundred-and-twenty-first held-out sets, then tuned on and learnt from (round 40), guarded
# at what they give: v118 (author DP, Deaf and hard-of-hearing people texting), v119 (DQ, mines, quarries and kilns),
# v120 (DR, veterinary clinics, pet shops and farms), v121 (DS, electricians, linemen, AC installers). Measured once at
# 3ec1157 (round 37): 1,206/1,240, 19/1,320; after rounds 38 and 39 (round 39 aimed at v120's misses): 1,215/1,240,
# 18/1,320; the model retrained on them 1,216/1,240, 18/1,320; round 40 1,240/1,240, 17/1,320 (rules alone 1,157, 34)
# (docs/triage.md, "Round 40").
DEV_DP = load_labelled(LABELLED / "dev119.jsonl")
DEV_DQ = load_labelled(LABELLED / "dev120.jsonl")
DEV_DR = load_labelled(LABELLED / "dev121.jsonl")
DEV_DS = load_labelled(LABELLED / "dev122.jsonl")
# The hundred-and-twenty-second to hundred-and-twenty-fifth held-out sets, then tuned on and learnt from (round 41),
# guarded at what they give: v122 (author DT, spas, beauty salons and cosmetic clinics), v123 (DU, social workers,
# shelters and harm-reduction outreach), v124 (DV, retirees' morning exercise groups), v125 (DW, couples texting about
# each other). Measured once at 53e66a0 (round 39): 1,236/1,240, 17/1,320; round 40 (written without them): 1,237/1,240,
# 17/1,320; the model retrained on them 1,238/1,240, 17/1,320; round 41 1,240/1,240, 14/1,320 (rules alone 1,176, 33)
# (docs/triage.md, "Round 41").
DEV_DT = load_labelled(LABELLED / "dev123.jsonl")
DEV_DU = load_labelled(LABELLED / "dev124.jsonl")
DEV_DV = load_labelled(LABELLED / "dev125.jsonl")
DEV_DW = load_labelled(LABELLED / "dev126.jsonl")
# The hundred-and-twenty-sixth to hundred-and-twenty-ninth held-out sets, then tuned on and learnt from (round 42),
# guarded at what they give: v126 (author DX, swimming pools, water parks and beaches), v127 (DY, airports and
# flights), v128 (DZ, house movers, cleaners and on-call handymen), v129 (EA, families lodging around a provincial
# hospital). Measured once at 3496066 (round 40): 1,233/1,240, 26/1,320; round 41 (written without them): 1,233/1,240,
# 24/1,320; the model retrained on them 1,233/1,240, 22/1,320; round 42 1,239/1,240, 22/1,320 (rules alone 1,190, 54;
# v126's goodbye told by a place and a time is left) (docs/triage.md, "Round 42").
DEV_DX = load_labelled(LABELLED / "dev127.jsonl")
DEV_DY = load_labelled(LABELLED / "dev128.jsonl")
DEV_DZ = load_labelled(LABELLED / "dev129.jsonl")
DEV_EA = load_labelled(LABELLED / "dev130.jsonl")
# The hundred-and-thirtieth to hundred-and-thirty-third held-out sets, then tuned on and learnt from (round 43),
# guarded at what they give: v130 (author EB, street sweepers and sanitation workers), v131 (EC, gas-cylinder and
# bottled-water delivery men), v132 (ED, performers and backstage crews), v133 (EE, beekeepers and honey sellers).
# Measured once at ff5fbf1 (round 41): 1,227/1,240, 28/1,320; round 42 (written without them): 1,227/1,240, 28/1,320;
# the model retrained on them 1,228/1,240, 26/1,320; round 43 1,240/1,240, 9/1,320 (rules alone 1,196, 30)
# (docs/triage.md, "Round 43").
DEV_EB = load_labelled(LABELLED / "dev131.jsonl")
DEV_EC = load_labelled(LABELLED / "dev132.jsonl")
DEV_ED = load_labelled(LABELLED / "dev133.jsonl")
DEV_EE = load_labelled(LABELLED / "dev134.jsonl")
# The hundred-and-thirty-fourth to hundred-and-thirty-seventh held-out sets, then tuned on and learnt from (round 44),
# guarded at what they give: v134 (author EF, motorbike repair shops, tyre menders and car washes), v135 (EG, craft
# villages), v136 (EH, tailors, seamstresses and home garment pieceworkers), v137 (EI, long-distance truck and coach
# drivers). Measured once at 4fc269e (round 42): 1,234/1,240, 23/1,320; round 43 (written without them): 1,234/1,240,
# 23/1,320; the model retrained on them 1,236/1,240, 21/1,320; round 44 1,240/1,240, 15/1,320 (rules alone 1,163, 33)
# (docs/triage.md, "Round 44").
DEV_EF = load_labelled(LABELLED / "dev135.jsonl")
DEV_EG = load_labelled(LABELLED / "dev136.jsonl")
DEV_EH = load_labelled(LABELLED / "dev137.jsonl")
DEV_EI = load_labelled(LABELLED / "dev138.jsonl")
# The hundred-and-thirty-eighth to hundred-and-forty-first held-out sets, then tuned on and learnt from (round 45),
# guarded at what they give: v138 (author EJ, rubber tappers and plantation labourers), v139 (EK, funerals: funeral
# crews and families keeping vigil), v140 (EL, port and dock workers), v141 (EM, blind and visually impaired people
# typing by screen reader or voice). Measured once at b9ea67f (round 43): 1,236/1,240, 22/1,320; round 44 (written
# without them) the same; the model retrained on them 1,238/1,240, 19/1,320; round 45 1,240/1,240 (rules alone 1,168
# -> 1,172 of 1,240, 41 -> 40 false alarms) (docs/triage.md, "Round 45").
DEV_EJ = load_labelled(LABELLED / "dev139.jsonl")
DEV_EK = load_labelled(LABELLED / "dev140.jsonl")
DEV_EL = load_labelled(LABELLED / "dev141.jsonl")
DEV_EM = load_labelled(LABELLED / "dev142.jsonl")
# The hundred-and-forty-second to hundred-and-forty-fifth held-out sets, then tuned on and learnt from (round 46),
# guarded at what they give: v142 (author EN, coastal salt farmers), v143 (EO, swiftlet-nest keepers and cleaners),
# v144 (EP, lobster-cage and pearl farmers and hookah divers), v145 (EQ, old men's songbird clubs and a tea stall).
# Measured once at a5f5c85 (round 44): 1,227/1,240, 14/1,320; round 45 (written without them) 1,227/1,240, 13/1,320;
# the model retrained on them 1,228/1,240, 13/1,320; round 46 1,240/1,240, 2/1,320 (rules alone 1,177 -> 1,190 of 1,240,
# 32 -> 21 false alarms) (docs/triage.md, "Round 46").
DEV_EN = load_labelled(LABELLED / "dev143.jsonl")
DEV_EO = load_labelled(LABELLED / "dev144.jsonl")
DEV_EP = load_labelled(LABELLED / "dev145.jsonl")
DEV_EQ = load_labelled(LABELLED / "dev146.jsonl")
# The hundred-and-forty-sixth to hundred-and-forty-ninth held-out sets, then tuned on and learnt from (round 47),
# guarded at what they give: v146 (author ER, martial-arts and boxing clubs), v147 (ES, city sanitation workers and
# recyclers), v148 (ET, night-market and street-food vendors), v149 (EU, Central Highlands coffee, pepper and durian
# farmers). Measured once at 190c10d (round 45): 1,233/1,240, 10/1,320; round 46 (written without them) 1,234/1,240,
# 10/1,320; round 47 1,240/1,240, 5/1,320 (docs/triage.md, "Round 47").
DEV_ER = load_labelled(LABELLED / "dev147.jsonl")
DEV_ES = load_labelled(LABELLED / "dev148.jsonl")
DEV_ET = load_labelled(LABELLED / "dev149.jsonl")
DEV_EU = load_labelled(LABELLED / "dev150.jsonl")
# The hundred-and-fiftieth to hundred-and-fifty-third held-out sets, then tuned on and learnt from (round 48), guarded
# at what they give: v150 (author EV, Mekong floating-market traders and ferry crews), v151 (EW, ethnic boarding schools
# in the northern mountains), v152 (EX, brick kilns, stone quarries and sand dredgers), v153 (EY, kindergartens and home
# daycare). Measured once at cf44248 (round 46): 1,236/1,240, 12/1,320; round 47 (written without them) 1,235/1,240,
# 12/1,320; round 48 1,240/1,240, 2/1,320 (docs/triage.md, "Round 48").
DEV_EV = load_labelled(LABELLED / "dev151.jsonl")
DEV_EW = load_labelled(LABELLED / "dev152.jsonl")
DEV_EX = load_labelled(LABELLED / "dev153.jsonl")
DEV_EY = load_labelled(LABELLED / "dev154.jsonl")
# The hundred-and-fifty-fourth to hundred-and-fifty-seventh blind sets, tuned on and learnt from (round 49), guarded
# at what they give: v154 (author EZ, pagoda and parish communities), v155 (FA, factory workers in the industrial
# zones), v156 (FB, university students in dorms and rented rooms), v157 (FC, families who try folk and herbal
# remedies first). Measured once at 27ce7ae (round 47): 1,234/1,240, 20/1,320; round 49 1,240/1,240, 15/1,320
# (docs/triage.md, "Round 49").
DEV_EZ = load_labelled(LABELLED / "dev155.jsonl")
DEV_FA = load_labelled(LABELLED / "dev156.jsonl")
DEV_FB = load_labelled(LABELLED / "dev157.jsonl")
DEV_FC = load_labelled(LABELLED / "dev158.jsonl")
# The hundred-and-fifty-eighth to hundred-and-sixty-first blind sets, written before round 50, measured once at 27ce7ae
# (round 47), then tuned on and learnt from (round 50), guarded at what they give: v158 (author FD, hotel, resort and
# homestay staff and guests), v159 (FE, amateur sport), v160 (FF, high-school teenagers, teachers and parents), v161
# (FG, migrant workers abroad and their families). At 27ce7ae 1,233/1,240, 19/1,320 (rules alone 1,170, 38); round 50
# 1,240/1,240, 1/1,320 (docs/triage.md, "Round 50").
DEV_FD = load_labelled(LABELLED / "dev159.jsonl")
DEV_FE = load_labelled(LABELLED / "dev160.jsonl")
DEV_FF = load_labelled(LABELLED / "dev161.jsonl")
DEV_FG = load_labelled(LABELLED / "dev162.jsonl")
# The hundred-and-sixty-second to hundred-and-sixty-fifth blind sets, the held-out test of rounds 48-50, then tuned on
# and learnt from (round 51), guarded at what they give: v162 (author FH, wholesale night-market porters, loaders and
# traders), v163 (FI, people living with mental illness and their families), v164 (FJ, people living with physical
# disabilities and their carers), v165 (FK, office workers). Measured once at 8f8d5b8 (round 47): 1,231/1,240,
# 18/1,320; at b1b5781 (rounds 48-50 and the lead's "deadline" fix, which two of their misses showed) 1,234/1,240,
# 16/1,320; round 51 1,240/1,240, 3/1,320 (docs/triage.md, "Round 51").
DEV_FH = load_labelled(LABELLED / "dev163.jsonl")
DEV_FI = load_labelled(LABELLED / "dev164.jsonl")
DEV_FJ = load_labelled(LABELLED / "dev165.jsonl")
DEV_FK = load_labelled(LABELLED / "dev166.jsonl")
# The hundred-and-sixty-sixth to hundred-and-sixty-ninth blind sets, written before round 52, measured once at ef5dd5b
# (rounds 48-50), then tuned on and learnt from (round 52), guarded at what they give: v166 (author FL, Khmer and Cham
# families writing Vietnamese as a second language), v167 (FM, elderly people living alone and their far-away
# children), v168 (FN, construction sites and workers' camps), v169 (FO, city parents of babies and toddlers, with the
# grandparents who help). At ef5dd5b 1,236/1,240, 22/1,320 (rules alone 1,174, 39); round 52 1,240/1,240, 1/1,320
# (docs/triage.md, "Round 52").
DEV_FL = load_labelled(LABELLED / "dev167.jsonl")
DEV_FM = load_labelled(LABELLED / "dev168.jsonl")
DEV_FN = load_labelled(LABELLED / "dev169.jsonl")
DEV_FO = load_labelled(LABELLED / "dev170.jsonl")
# The hundred-and-seventieth to hundred-and-seventy-third blind sets, written before round 53, measured once at b1b5781
# (rounds 48-50 and the deadline fix), then tuned on and learnt from (round 53), guarded at what they give: v170
# (author FP, people living with cancer in chemotherapy or radiotherapy and their families), v171 (FQ, patients at home
# after dental surgery and the clinic's diabetic patients), v172 (FR, rural adults newly on insulin or sulfonylureas),
# v173 (FS, live-in domestic helpers, nannies and carers). At b1b5781 1,233/1,240, 15/1,320 (rules alone 1,165, 36);
# round 53 1,240/1,240, 6/1,320 (docs/triage.md, "Round 53").
DEV_FP = load_labelled(LABELLED / "dev171.jsonl")
DEV_FQ = load_labelled(LABELLED / "dev172.jsonl")
DEV_FR = load_labelled(LABELLED / "dev173.jsonl")
DEV_FS = load_labelled(LABELLED / "dev174.jsonl")
# The hundred-and-seventy-fourth to hundred-and-seventy-seventh blind sets (the held-out test of rounds 51-53), measured
# once at b1b5781 and again at 2eefd2c (rounds 51-53 merged), then tuned on and learnt from (round 54), guarded at what
# they give: v174 (author FT, Mekong Delta fruit-orchard families and their hired pickers), v175 (FU, forest rangers,
# firefighters and volunteer rescue teams), v176 (FV, the urban poor of the big cities), v177 (FW, parents and carers of
# children and young adults with autism or developmental disabilities). At 2eefd2c 1,238/1,240, 24/1,320 (rules alone
# 1,152, 45); round 54 1,240/1,240, 14/1,320 (docs/triage.md, "Round 54").
DEV_FT = load_labelled(LABELLED / "dev175.jsonl")
DEV_FU = load_labelled(LABELLED / "dev176.jsonl")
DEV_FV = load_labelled(LABELLED / "dev177.jsonl")
DEV_FW = load_labelled(LABELLED / "dev178.jsonl")
# v178–v181 (blind, written this session, measured once at 2eefd2c: rounds 51–53), learnt from at once (round 55): v178
# (author FX, cooks, kitchen hands, servers and owners of restaurants, wedding caterers and canteen kitchens), v179 (FY,
# families caring at home for a bedridden elder with dementia or after a stroke), v180 (FZ, shrimp and catfish pond
# farmers of the Mekong Delta and their hands), v181 (GA, night-shift security guards, parking attendants, watchmen and
# night porters). At 2eefd2c 1,234/1,240, 24/1,320 (rules alone 1,154, 59); round 55 1,240/1,240, 17/1,320 (docs/triage.md,
# "Round 55").
DEV_FX = load_labelled(LABELLED / "dev179.jsonl")
DEV_FY = load_labelled(LABELLED / "dev180.jsonl")
DEV_FZ = load_labelled(LABELLED / "dev181.jsonl")
DEV_GA = load_labelled(LABELLED / "dev182.jsonl")
# v186–v189 (blind, written this session, measured once at 73c8c30), learnt from at once (round 56): v186 (author GF,
# commune health-station staff and village health workers relaying villagers), v187 (GG, families of heavy drinkers),
# v188 (GH, Hoa families of Cho Lon and Southern towns), v189 (GI, teenagers and their parents). At 73c8c30
# 1,231/1,240, 20/1,320 (rules alone 1,178, 37) (docs/triage.md, "Round 56").
DEV_GF = load_labelled(LABELLED / "dev183.jsonl")
DEV_GG = load_labelled(LABELLED / "dev184.jsonl")
DEV_GH = load_labelled(LABELLED / "dev185.jsonl")
DEV_GI = load_labelled(LABELLED / "dev186.jsonl")
# v182–v185 (blind, written while rounds 54–55 were worked, measured once at 2eefd2c and at 08d1aa3), learnt from at
# once (round 57): v182 (author GB, people home after a heart attack, a stent or bypass, or on blood thinners), v183 (GC,
# forest gatherers of the highlands), v184 (GD, young adults on weekend trips), v185 (GE, adults living with asthma,
# epilepsy, severe allergies, thalassaemia, type 1 diabetes). At 08d1aa3 1,237/1,240, 16/1,320 (docs/triage.md,
# "Round 57").
DEV_GB = load_labelled(LABELLED / "dev187.jsonl")
DEV_GC = load_labelled(LABELLED / "dev188.jsonl")
DEV_GD = load_labelled(LABELLED / "dev189.jsonl")
DEV_GE = load_labelled(LABELLED / "dev190.jsonl")
# v194–v197 (blind, written this session, measured once at 08d1aa3: rounds 54–56), learnt from at once (round 58): v194
# (author GN, small online sellers and livestreamers, mothers multitasking), v195 (GO, foreigners living in Vietnam,
# Viet kieu visiting and their families), v196 (GP, offshore fishing-boat crews and their families on the Central and
# South coast), v197 (GQ, families of Nghe An to Quang Nam writing in their dialect). At 08d1aa3 1,234/1,240, 23/1,320
# (rules alone 1,143, 47) (docs/triage.md, "Round 58").
DEV_GN = load_labelled(LABELLED / "dev191.jsonl")
DEV_GO = load_labelled(LABELLED / "dev192.jsonl")
DEV_GP = load_labelled(LABELLED / "dev193.jsonl")
DEV_GQ = load_labelled(LABELLED / "dev194.jsonl")
# v198–v201 (blind, measured once at 9a3f65a), learnt from at once (round 59): v198 (author GR, young men doing military
# service and their families), v199 (GS, residents and staff of big city apartment blocks), v200 (GT, families during
# Tết), v201 (GU, H'Mông, Dao, Thái and Tày families of the far-northern mountains). At 9a3f65a 1,235/1,240, 26/1,320
# (rules alone 1,169, 50) (docs/triage.md, "Round 59").
DEV_GR = load_labelled(LABELLED / "dev195.jsonl")
DEV_GS = load_labelled(LABELLED / "dev196.jsonl")
DEV_GT = load_labelled(LABELLED / "dev197.jsonl")
DEV_GU = load_labelled(LABELLED / "dev198.jsonl")
DEV_GV = load_labelled(LABELLED / "dev199.jsonl")
DEV_GW = load_labelled(LABELLED / "dev200.jsonl")
DEV_GX = load_labelled(LABELLED / "dev201.jsonl")
DEV_GY = load_labelled(LABELLED / "dev202.jsonl")
# v190-v193 (authors GJ-GM), the held-out test of rounds 57-60, learnt from in round 61: delivery riders, pharmacy
# staff, grandparents raising grandchildren, pregnant women and village midwives. At bb15fc1 1,228/1,240, 20/1,320
# (docs/triage.md, "Round 61").
DEV_GJ = load_labelled(LABELLED / "dev203.jsonl")
DEV_GK = load_labelled(LABELLED / "dev204.jsonl")
DEV_GL = load_labelled(LABELLED / "dev205.jsonl")
DEV_GM = load_labelled(LABELLED / "dev206.jsonl")
# v210–v213 (blind, measured once at dab52fd: rounds 57–60), learnt from at once (round 62): v210 (author HD, adults with
# diabetic kidney disease on haemodialysis or after a transplant, and their families), v211 (HE, messages dictated by
# voice typing), v212 (HF, electricians, air-con and solar installers, roofers and painters, and house owners), v213
# (HG, parents and grandparents of babies under one year). At dab52fd 1,233/1,240, 20/1,320 (rules alone 1,163, 40)
# (docs/triage.md, "Round 62").
DEV_HD = load_labelled(LABELLED / "dev207.jsonl")
DEV_HE = load_labelled(LABELLED / "dev208.jsonl")
DEV_HF = load_labelled(LABELLED / "dev209.jsonl")
DEV_HG = load_labelled(LABELLED / "dev210.jsonl")
# v206–v209 (authors GZ, HA, HB, HC), the held-out test of rounds 61–63, measured once at dab52fd and learnt from (round 64):
# v206 (GZ, long-haul truck and coach drivers, their crews and families), v207 (HA, hair salon, nail shop, spa and small
# beauty-clinic staff and customers), v208 (HB, families at village weddings, death anniversaries and funerals), v209 (HC,
# pilgrims and festival-goers). At dab52fd 1,231/1,240, 15/1,320 (rules alone 1,163, 33); after rounds 61–63 1,232, 15
# (docs/triage.md, "Round 64").
DEV_GZ = load_labelled(LABELLED / "dev211.jsonl")
DEV_HA = load_labelled(LABELLED / "dev212.jsonl")
DEV_HB = load_labelled(LABELLED / "dev213.jsonl")
DEV_HC = load_labelled(LABELLED / "dev214.jsonl")
# written for the weakest categories, tuned on and learnt from
FOCUS = load_labelled(LABELLED / "focus.jsonl")
FAQ_VAL = Path(__file__).resolve().parents[3] / "shared" / "eval" / "faq-val" / "queries.jsonl"
FAQ_FLAGS = DATA / "triage_faqval_flags.jsonl"  # every faq-val message the detector flags, labelled by hand

CATEGORIES = {
    "chest_pain", "stroke", "breathing", "choking", "unconscious", "seizure", "severe_bleeding",
    "internal_bleeding", "anaphylaxis", "suicide", "poisoning", "swallowed_object", "bite_sting", "burn",
    "electric_shock", "drowning", "head_injury", "major_trauma", "acute_abdomen", "sepsis", "pregnancy",
    "child_danger", "severe_headache", "heatstroke", "hypoglycaemia", "hyperglycaemia", "diabetic_foot",
    "dental_airway", "dental_bleeding", "facial_trauma", "hypertensive_crisis",
}  # fmt: skip
INVISIBLE = [
    "\u00ad",
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u200e",
    "\u202a",
    "\u034f",
    "\u180e",
]


def test_rules_file_covers_every_category_with_sources_and_steps():
    rules = default_rules()
    assert {c.id for c in rules.categories} >= CATEGORIES
    for cat in rules.categories:
        assert cat.name and cat.system and cat.advice_source, cat.id
        assert cat.message or 2 <= len(cat.advice) <= 3, (cat.id, cat.advice)
    assert len(rules.sources) >= 5 and rules.crisis_lines


def test_a_broken_rules_file_is_refused_with_the_reason():
    text = RULES_FILE.read_text(encoding="utf-8")
    broken = text.replace(
        'advice_source = "IFRC 2020: chest pain', 'source_advice = "IFRC 2020: chest pain', 1
    )
    with pytest.raises(ValueError, match=r"chest_pain.*advice_source"):
        parse_rules(broken)
    with pytest.raises(ValueError, match="bad phrase"):
        parse_rules(text.replace('"muon chet", ', '"muon (chet", ', 1))
    # who a sign is told of beside an animal word cannot be left out: every message naming a pet needs it
    with pytest.raises(ValueError, match=r"markers: missing subject_person"):
        parse_rules(text.replace("\nsubject_person = [", "\nsubject_persons = [", 1))


def test_the_trace_names_each_sign_once():
    """An admin reading a trace sees each phrase that fired once, even when two of a category's lists read it."""
    result = triage("bố tôi méo miệng, nói ngọng", default_rules(), model=None)
    assert result.categories == ("stroke",)
    named = [(h.category, h.kind, h.phrase) for h in result.hits]
    assert named and len(named) == len(set(named)), named


@needs_held_out
def test_held_out_set_is_big_and_covers_every_category():
    emergencies = [r for r in TEST_SET if r["emergency"]]
    assert len(emergencies) >= 300 and len(TEST_SET) - len(emergencies) >= 300
    # every category the test set's author was given
    assert {r["category"] for r in emergencies} == CATEGORIES


@pytest.mark.parametrize("name", list(TUNED))
def test_every_emergency_of_the_tuning_sets_is_caught_with_under_two_percent_false_alarms(name):
    report = evaluate(TUNED[name])
    assert report.missed == [], f"{name}: missed {len(report.missed)}: {[r['text'] for r in report.missed]}"
    assert report.false_alarm_rate <= 0.02, f"{name}: {[r['text'] for r in report.false_alarms]}"


@pytest.mark.parametrize(
    ("name", "rows", "recall", "false_alarms"),
    [
        ("rule authors", AUTHORS, 0.99, 0.01),
        ("dev C", DEV_C, 0.9, 0.06),
        ("dev D", DEV_D, 0.95, 0.02),
        ("dev AO", DEV_AO, 0.993, 0.026),
        ("dev AP", DEV_AP, 0.983, 0.022),
        ("dev AQ", DEV_AQ, 0.993, 0.01),
        ("dev AR", DEV_AR, 0.996, 0.009),
        ("dev BA", DEV_BA, 1.0, 0.007),
        ("dev BB", DEV_BB, 1.0, 0.012),
        ("dev BC", DEV_BC, 1.0, 0.018),
        ("dev BD", DEV_BD, 1.0, 0.021),
        # 310/310 since round 37 (an English driver under the car after a crash, legs trapped)
        ("dev BE", DEV_BE, 1.0, 0.016),
        ("dev BF", DEV_BF, 0.996, 0.013),
        ("dev BG", DEV_BG, 1.0, 0.01),
        ("dev BH", DEV_BH, 1.0, 0.019),
        ("dev BI", DEV_BI, 1.0, 0.01),
        ("dev BJ", DEV_BJ, 1.0, 0.01),
        ("dev BK", DEV_BK, 1.0, 0.019),
        ("dev BL", DEV_BL, 1.0, 0.013),
        ("dev BM", DEV_BM, 1.0, 0.004),
        ("dev BN", DEV_BN, 1.0, 0.007),
        ("dev BO", DEV_BO, 1.0, 0.004),
        ("dev BP", DEV_BP, 1.0, 0.004),
        ("dev BQ", DEV_BQ, 1.0, 0.0),
        # one false alarm since the model learnt neutral surroundings (model.AUGMENT): "khó thở ko ạ? dạ ko, e chỉ hỏi
        # nghẹt mũi…", the rules' find no longer under the doubt (the backtest: fewer false alarms over all blind sets)
        ("dev BR", DEV_BR, 1.0, 0.004),
        ("dev BS", DEV_BS, 1.0, 0.004),
        ("dev BT", DEV_BT, 1.0, 0.0),
        ("dev BU", DEV_BU, 1.0, 0.004),
        ("dev BV", DEV_BV, 1.0, 0.0),
        ("dev BW", DEV_BW, 1.0, 0.007),
        ("dev BX", DEV_BX, 1.0, 0.013),
        ("dev BY", DEV_BY, 1.0, 0.01),
        ("dev BZ", DEV_BZ, 1.0, 0.007),
        ("dev CA", DEV_CA, 1.0, 0.016),
        ("dev CB", DEV_CB, 1.0, 0.016),
        ("dev CC", DEV_CC, 1.0, 0.0),
        ("dev CD", DEV_CD, 1.0, 0.004),
        ("dev CE", DEV_CE, 1.0, 0.0),
        ("dev CF", DEV_CF, 1.0, 0.0),
        ("dev CG", DEV_CG, 1.0, 0.007),
        ("dev CH", DEV_CH, 1.0, 0.01),
        ("dev CJ", DEV_CJ, 0.996, 0.025),
        ("dev CK", DEV_CK, 0.996, 0.004),
        ("dev CL", DEV_CL, 0.996, 0.022),
        ("dev CM", DEV_CM, 1.0, 0.025),
        ("dev CN", DEV_CN, 1.0, 0.01),
        ("dev CO", DEV_CO, 1.0, 0.007),
        # one false alarm more since the merge of rounds 48-50 (the model retrained on dev151-dev162): a question asked
        # ahead ("Neu dang o nha mot minh ma duong xuong 2 thi toi nen lam gi truoc"), which the rules read ("dang")
        # and the model no longer doubts
        ("dev CP", DEV_CP, 1.0, 0.007),
        ("dev CQ", DEV_CQ, 1.0, 0.0),
        ("dev CR", DEV_CR, 1.0, 0.013),
        # one false alarm more since round 36's retrain: a forwarded warning about a jelly choking ("cảnh báo bé bị hóc
        # thạch rau câu, có cần cấm con ăn thạch không"), which the rules read and the model no longer doubts
        ("dev CS", DEV_CS, 1.0, 0.01),
        ("dev CT", DEV_CT, 1.0, 0.016),
        ("dev CU", DEV_CU, 1.0, 0.007),
        ("dev CV", DEV_CV, 1.0, 0.01),
        ("dev CW", DEV_CW, 1.0, 0.004),
        ("dev CX", DEV_CX, 1.0, 0.028),
        ("dev CY", DEV_CY, 1.0, 0.013),
        ("dev CZ", DEV_CZ, 1.0, 0.013),
        ("dev DA", DEV_DA, 1.0, 0.007),
        ("dev DB", DEV_DB, 1.0, 0.019),
        # two false alarms more since round 40's retrain on dev119-dev122 (not the rules): a child's forehead bump
        # "khóc một lúc rồi chơi tiếp" and a sip of diluted dish soap "không nôn", which the model no longer doubts
        ("dev DC", DEV_DC, 1.0, 0.016),
        ("dev DD", DEV_DD, 1.0, 0.013),
        ("dev DE", DEV_DE, 1.0, 0.019),
        ("dev DF", DEV_DF, 1.0, 0.007),
        ("dev DG", DEV_DG, 1.0, 0.037),
        ("dev DH", DEV_DH, 1.0, 0.007),
        ("dev DI", DEV_DI, 1.0, 0.007),
        ("dev DJ", DEV_DJ, 1.0, 0.01),
        # one false alarm more since round 43's retrain on dev131-dev134 (not the rules): a jaw broken in a crash "đã cố định
        # hàm ở bệnh viện, giờ ăn cháo lỏng qua ống hút, ăn gì cho đủ chất", which the rules read and the model no longer doubts
        ("dev DK", DEV_DK, 1.0, 0.01),
        ("dev DL", DEV_DL, 1.0, 0.019),
        ("dev DM", DEV_DM, 1.0, 0.007),
        ("dev DN", DEV_DN, 1.0, 0.01),
        ("dev DO", DEV_DO, 1.0, 0.016),
        ("dev DP", DEV_DP, 1.0, 0.016),
        ("dev DQ", DEV_DQ, 1.0, 0.028),
        ("dev DR", DEV_DR, 1.0, 0.01),
        ("dev DS", DEV_DS, 1.0, 0.0),
        ("dev DT", DEV_DT, 1.0, 0.007),
        ("dev DU", DEV_DU, 1.0, 0.01),
        ("dev DV", DEV_DV, 1.0, 0.016),
        ("dev DW", DEV_DW, 1.0, 0.013),
        ("dev DX", DEV_DX, 0.996, 0.019),
        ("dev DY", DEV_DY, 1.0, 0.013),
        ("dev DZ", DEV_DZ, 1.0, 0.019),
        ("dev EA", DEV_EA, 1.0, 0.019),
        ("dev EB", DEV_EB, 1.0, 0.0),
        ("dev EC", DEV_EC, 1.0, 0.007),
        ("dev ED", DEV_ED, 1.0, 0.01),
        ("dev EE", DEV_EE, 1.0, 0.013),
        ("dev EF", DEV_EF, 1.0, 0.016),
        ("dev EG", DEV_EG, 1.0, 0.022),
        ("dev EH", DEV_EH, 1.0, 0.007),
        ("dev EI", DEV_EI, 1.0, 0.004),
        ("dev EJ", DEV_EJ, 1.0, 0.01),
        ("dev EK", DEV_EK, 1.0, 0.022),
        ("dev EL", DEV_EL, 1.0, 0.013),
        ("dev EM", DEV_EM, 1.0, 0.016),
        ("dev EN", DEV_EN, 1.0, 0.004),
        ("dev EO", DEV_EO, 1.0, 0.004),
        ("dev EP", DEV_EP, 1.0, 0.0),
        ("dev EQ", DEV_EQ, 1.0, 0.0031),
        ("dev ER", DEV_ER, 1.0, 0.004),
        ("dev ES", DEV_ES, 1.0, 0.0),
        ("dev ET", DEV_ET, 1.0, 0.01),
        ("dev EU", DEV_EU, 1.0, 0.004),
        ("dev EV", DEV_EV, 1.0, 0.004),
        ("dev EW", DEV_EW, 1.0, 0.0),
        ("dev EX", DEV_EX, 1.0, 0.004),
        ("dev EY", DEV_EY, 1.0, 0.0),
        ("dev EZ", DEV_EZ, 1.0, 0.007),
        ("dev FA", DEV_FA, 1.0, 0.007),
        ("dev FB", DEV_FB, 1.0, 0.019),
        ("dev FC", DEV_FC, 1.0, 0.016),
        ("dev FD", DEV_FD, 1.0, 0.0),
        ("dev FE", DEV_FE, 1.0, 0.0031),
        ("dev FF", DEV_FF, 1.0, 0.0),
        ("dev FG", DEV_FG, 1.0, 0.004),
        ("dev FH", DEV_FH, 1.0, 0.0),
        ("dev FI", DEV_FI, 1.0, 0.0),
        ("dev FJ", DEV_FJ, 1.0, 0.007),
        ("dev FK", DEV_FK, 1.0, 0.004),
        # one false alarm left: a sugar of 2.9 yesterday, treated and fine today (the glucose reader; round 52)
        ("dev FL", DEV_FL, 1.0, 0.004),
        # the farewell ("mẹ em vừa nhắn tin chào từ biệt … em gọi mãi mẹ không nghe máy") is read by round 51's rule for the
        # family since the merge (round 52 left it to round 51)
        ("dev FM", DEV_FM, 1.0, 0.0),
        ("dev FN", DEV_FN, 1.0, 0.0),
        ("dev FO", DEV_FO, 1.0, 0.0),
        ("dev FP", DEV_FP, 1.0, 0.0061),
        ("dev FQ", DEV_FQ, 1.0, 0.0091),
        ("dev FR", DEV_FR, 1.0, 0.004),
        ("dev FS", DEV_FS, 1.0, 0.0091),
        ("dev FT", DEV_FT, 1.0, 0.0152),
        ("dev FU", DEV_FU, 1.0, 0.0152),
        ("dev FV", DEV_FV, 1.0, 0.0122),
        ("dev FW", DEV_FW, 1.0, 0.0061),
        ("dev FX", DEV_FX, 1.0, 0.0122),
        ("dev FY", DEV_FY, 1.0, 0.0122),
        ("dev FZ", DEV_FZ, 1.0, 0.0122),
        ("dev GA", DEV_GA, 1.0, 0.0152),
        ("dev GF", DEV_GF, 1.0, 0.0213),
        ("dev GG", DEV_GG, 1.0, 0.0091),
        ("dev GH", DEV_GH, 1.0, 0.0213),
        ("dev GI", DEV_GI, 1.0, 0.0061),
        ("dev GB", DEV_GB, 1.0, 0.0),
        # one false alarm left: the snake-bitten dog treated by the vet, "can snakes bite through rubber boots?" (round 57)
        ("dev GC", DEV_GC, 1.0, 0.0031),
        ("dev GD", DEV_GD, 1.0, 0.0),
        ("dev GE", DEV_GE, 1.0, 0.0),
        ("dev GN", DEV_GN, 1.0, 0.0),
        ("dev GO", DEV_GO, 1.0, 0.0031),
        ("dev GP", DEV_GP, 1.0, 0.0031),
        ("dev GQ", DEV_GQ, 1.0, 0.0061),
        ("dev GR", DEV_GR, 1.0, 0.0091),
        ("dev GS", DEV_GS, 1.0, 0.0122),
        ("dev GT", DEV_GT, 1.0, 0.0061),
        ("dev GU", DEV_GU, 1.0, 0.0091),
        ("dev GV", DEV_GV, 1.0, 0.0091),
        ("dev GW", DEV_GW, 1.0, 0.0031),
        # one false alarm with the model retrained on rounds 57-60 together (at the merge): a question after a film, "sơ cứu
        # ngừng tim còn dạy thổi ngạt không hay chỉ ép tim thôi" (the rules read it; round 60's own model doubted it)
        ("dev GX", DEV_GX, 1.0, 0.0031),
        ("dev GY", DEV_GY, 1.0, 0.0),
        ("dev GJ", DEV_GJ, 1.0, 0.0),
        ("dev GK", DEV_GK, 1.0, 0.0),
        ("dev GL", DEV_GL, 1.0, 0.0),
        ("dev GM", DEV_GM, 1.0, 0.0),
        ("dev HD", DEV_HD, 1.0, 0.0),
        ("dev HE", DEV_HE, 1.0, 0.0),
        ("dev HF", DEV_HF, 1.0, 0.0),
        ("dev HG", DEV_HG, 1.0, 0.0),
        ("dev GZ", DEV_GZ, 1.0, 0.0),
        ("dev HA", DEV_HA, 1.0, 0.0),
        ("dev HB", DEV_HB, 1.0, 0.0),
        ("dev HC", DEV_HC, 1.0, 0.0),
        ("focus", FOCUS, 0.98, 0.04),
    ],
)
def test_the_other_labelled_sets_hold(name, rows, recall, false_alarms):
    """Regression guards at the measured figures (bench_triage prints them)."""
    report = evaluate(rows)
    assert report.recall >= recall, [r["text"] for r in report.missed]
    assert report.false_alarm_rate <= false_alarms, [r["text"] for r in report.false_alarms]


@needs_held_out
def test_held_out_recall_and_false_alarms():
    """Measured once on rules never tuned on it (bench_triage prints the figures); this guards against
    regressions: a change that loses a held-out emergency or adds false alarms fails here."""
    report = evaluate(TEST_SET)
    assert report.recall >= HELD_OUT_RECALL, [r["text"] for r in report.missed]
    assert report.false_alarm_rate <= HELD_OUT_FALSE_ALARMS, [r["text"] for r in report.false_alarms]


@pytest.mark.skipif(not FAQ_VAL.is_file(), reason="../shared/eval/faq-val not present")
def test_real_patient_messages_raise_few_false_alarms_and_every_flag_was_reviewed():
    queries = [json.loads(line) for line in FAQ_VAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    reviewed = {r["query_id"]: r for r in load_labelled(FAQ_FLAGS)}
    flagged = {q["query_id"] for q in queries if triage(q["query"]).is_emergency}
    assert flagged <= set(reviewed), f"flags nobody reviewed: {sorted(flagged - set(reviewed))}"
    false_alarms = [q for q in flagged if not reviewed[q]["emergency"]]
    assert len(false_alarms) / len(queries) <= 0.02, false_alarms
    # Every real emergency found there once stays found (a retrained model once lost a 6-week-old feeding
    # less and less, a WHO young-infant danger sign).
    lost = sorted(q for q, r in reviewed.items() if r["emergency"] and q not in flagged)
    assert not lost, f"real emergencies no longer flagged: {lost}"


# Five examples: each one triages every held-out emergency (1,240), so every row gets five different insertions.
@needs_held_out
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_invisible_characters_anywhere_change_nothing(data):
    """Soft hyphens, zero-width and bidi characters inside words: every test emergency gets the verdict it
    gets without them (recall itself is the test above)."""
    # One draw of insertions per example (800 rows drawn separately overwhelm hypothesis), placed in each row
    # at the drawn fraction of its length, rotated by the golden ratio per row so rows get different spots.
    inserts = data.draw(
        st.lists(st.tuples(st.floats(0, 1), st.sampled_from(INVISIBLE)), min_size=1, max_size=6)
    )
    for k, (original, expected) in enumerate(held_out_emergency_verdicts().items()):
        text = original
        for fraction, char in inserts:
            i = int(((fraction + k * 0.618034) % 1.0) * len(text))
            text = text[:i] + char + text[i:]
        assert triage(text).categories == expected, repr(text)


@functools.cache
def held_out_emergency_verdicts() -> dict[str, tuple[str, ...]]:
    """Each held-out emergency's categories without invisible characters, computed once for every example."""
    return {row["text"]: triage(row["text"]).categories for row in TEST_SET if row["emergency"]}


@pytest.mark.parametrize(
    "text",
    [
        "kh\u00adó th\u00adở quá, môi tím",
        "k\u200bho tho, moi tim tai",
        "em muốn t\u2060ự tử",
        "ｋｈó ｔｈở, tím tái",
    ],
)
def test_the_reviewed_evasions_are_caught(text):
    assert triage(text).is_emergency


@pytest.mark.parametrize(
    "text",
    [
        "bé được 6 tuần, hay quấy khóc, và 2 hôm nay bé lại càng bú ít",
        "be nha em duoc 3 tuan, may hom nay bu it dan",
        "bé 2 tuần tuổi bú kém hẳn đi",
    ],
)
def test_a_young_infant_feeding_less_and_less_is_an_emergency(text):
    """WHO IMCI: a young infant (under two months) not feeding well is a danger sign, even told across
    several clauses of a long message."""
    assert "child_danger" in triage(text).categories


# The rule authors' rows of rounds 33 to 39 (tests/data/triage_rule_rows_r33.jsonl … _r39.jsonl): the
# rules read each as labelled, but the model is not trained on them. Retrained with round 33's it doubted faq-val's val-00398, a toddler
# vomiting everything; with round 34's first 66 it lost four emergencies it caught before, among them dev89's care-home
# hanging attempt and dev87's leukaemia patient oozing after an extraction (docs/triage.md, "Round 33", "Round 34").
RULE_ROWS = [row for path in sorted(DATA.glob("triage_rule_rows_r*.jsonl")) for row in load_labelled(path)]


@pytest.mark.parametrize("row", RULE_ROWS, ids=lambda row: row["text"][:40])
def test_the_rule_authors_rows_kept_from_the_model_are_read_by_the_rules(row):
    assert bool(triage(row["text"], default_rules(), model=None).categories) == row["emergency"]


def test_the_rule_rows_of_every_round_are_there():
    assert (
        len(RULE_ROWS)
        >= (23 + 126 + 69 + 38 + 45 + 44 + 43 + 47 + 39 + 25 + 61 + 49 + 15 + 3 + 57 + 37 + 53 + 33 + 44 + 4)
        + 62  # round 51 (tests/data/triage_rule_rows_r52.jsonl)
        + 50  # round 52 (tests/data/triage_rule_rows_r53.jsonl)
        + 41  # round 53 (tests/data/triage_rule_rows_r54.jsonl)
        + 48  # round 54 (tests/data/triage_rule_rows_r55.jsonl)
        + 38  # round 55 (tests/data/triage_rule_rows_r56.jsonl)
        + 6  # the merge of rounds 54-55 (tests/data/triage_rule_rows_r57.jsonl)
        + 24  # round 56 (tests/data/triage_rule_rows_r58.jsonl)
        + 59  # round 57 (tests/data/triage_rule_rows_r59.jsonl)
        + 47  # round 58 (tests/data/triage_rule_rows_r60.jsonl)
        + 36  # round 59 (tests/data/triage_rule_rows_r61.jsonl)
        + 28  # round 60 (tests/data/triage_rule_rows_r62.jsonl)
        + 62  # round 61 (tests/data/triage_rule_rows_r63.jsonl)
        + 53  # round 62 (tests/data/triage_rule_rows_r64.jsonl)
        + 528  # round 63 (tests/data/triage_rule_rows_r65.jsonl)
        + 103  # round 64 (tests/data/triage_rule_rows_r66.jsonl)
        + 435  # round 65 (tests/data/triage_rule_rows_r67.jsonl)
    )


# Round 32's second batch (the scope of a negation in four categories, a reassuring diagnosis): its ten rows are kept here,
# not in authors.jsonl, because the model retrained with them lost dev43's emergency (docs/triage.md, "Round 32").
@pytest.mark.parametrize(
    ("text", "emergency"),
    [
        (
            "bé 5 tháng ho sổ mũi 2 hôm, không sốt, không thở co kéo, không thở rút lõm ngực, vẫn bú tốt",
            False,
        ),
        ("be 4 thang tho rut lom nguc, bu kem, moi tim tai", True),
        (
            "ba em uống thuốc chống đông, không đi cầu phân đen, không chảy máu chân răng, hỏi bao lâu thì tái khám",
            False,
        ),
        ("mẹ uống thuốc chống đông, hôm nay đi ngoài phân đen như bã cà phê, đứng lên là chóng mặt", True),
        (
            "my gum bled a bit after the extraction but the bleeding stopped after biting on gauze, can I brush tonight?",
            False,
        ),
        (
            "still bleeding after biting on gauze for an hour since my extraction, mouth keeps filling with blood",
            True,
        ),
        ("nhổ răng khôn xong 4 tiếng mà môi dưới vẫn còn tê, chưa hết thuốc tê, có bình thường không", False),
        ("nho rang xong 3 tieng roi mau van chay khong ngung, uot het gac", True),
        (
            "tưởng bị đau tim vì nhói ngực trái, đi khám điện tim bình thường, bác sĩ bảo đau cơ do tập tạ",
            False,
        ),
        ("đau ngực dữ dội lan lên hàm, em tưởng đau cơ, giờ vã mồ hôi khó thở", True),
    ],
)
def test_round_32_negations_and_reassurance_are_read_by_the_rules(text, emergency):
    assert triage(text, default_rules()).is_emergency is emergency


@pytest.mark.parametrize(
    "text", ["bé 6 tuần không chịu bú bình, chỉ bú mẹ thôi", "bé 5 tuần bú mẹ tốt, không bỏ bú"]
)
def test_a_young_infant_refusing_only_the_bottle_is_not(text):
    assert not triage(text).is_emergency


@pytest.mark.parametrize(
    "text",
    [
        "Tôi không bị khó thở, chỉ ho nhẹ",
        "hạ đường huyết nhẹ xử trí tại nhà thế nào?",
        "năm ngoái bố tôi bị đột quỵ, giờ nên ăn gì",
        "dấu hiệu đột quỵ là gì",
        "giảm cân từ từ có tốt không",
        "chảy máu chân răng khi đánh răng",
        "cười muốn xỉu luôn",
    ],
)
def test_negation_past_mild_and_general_questions_raise_no_alarm(text):
    assert not triage(text).is_emergency


@pytest.mark.parametrize(
    "text",
    [
        "me toi khos thowr quas, mooi tisim, nosi khoong ra hoi",
        "ba em bij meos mieengj, noi khong ro, tay trasi yeeu",
        "con em ddang co giaatj, mawst trowjn ngwowcj",
        "kho1 tho73 qua2, moi6 tim1",
    ],
)
def test_telex_and_vni_leftovers_are_read(text):
    assert triage(text).is_emergency


@pytest.mark.parametrize(
    "text",
    [
        "How long does a root canal take? I need to book soon",
        "deep cut on my leg, keeps bleeding, feel dizzy",
        "Em bị ê răng sau khi tẩy trắng, it's been 2 days, có bình thường không",
        "Cháy bếp gas, mẹ em bị burn khoảng 20% cơ thể",
        "Em có dùng thuốc tăng cân Kian Pee Wan được 7 ngày",
    ],
)
def test_english_words_and_names_are_not_taken_for_telex(text):
    assert untelex(text, default_rules().words) == text


@pytest.mark.parametrize(
    ("text", "suicide"),
    [
        ("tu sat nha em bi gi set het, lau bang gi cho sach", False),
        ("tủ sắt văn phòng nặng quá, bê một mình có sao không", False),
        ("em muon tu sat, em da chuan bi thuoc roi", True),
        ("tu sat bang thuoc ngu, em uong roi", True),
    ],
)
def test_an_iron_cabinet_typed_without_diacritics_is_no_suicide(text, suicide):
    """'tủ sắt' (an iron cabinet) and 'tự sát' (suicide) fold to the same letters: the words around them decide."""
    assert ("suicide" in triage(text, default_rules(), model=None).categories) is suicide


@pytest.mark.parametrize(
    ("text", "emergency"),
    [
        ('fwd tin chồng em: "anh đau ngực dữ dội, vã mồ hôi, khó thở"', True),
        ('chuyển tiếp tin nhắn của mẹ: "mẹ thở không nổi, nằm xuống là ngộp, ho ra bọt hồng"', True),
        ('fwd tin cảnh báo: "đau ngực dữ dội, vã mồ hôi là dấu hiệu nhồi máu cơ tim, hãy gọi 115"', False),
        ('fwd tin nóng: "một người đàn ông bị điện giật tử vong khi sửa mái tôn"', False),
        ('fwd clip: "võ sĩ bị đấm gãy hàm trên sàn đấu", chồng em hỏi gãy hàm thì mổ thế nào', False),
    ],
)
def test_a_relatives_forwarded_message_is_read_forwarded_news_is_not(text, emergency):
    """'tin' is the news and also a message: "fwd tin chồng em: …" forwards the words of the one in danger, now
    (v60's three misses at round 24), while a forwarded warning, breaking news or a clip stays a story (round 25)."""
    assert triage(text, default_rules(), model=None).is_emergency is emergency


@pytest.mark.parametrize(
    ("text", "emergency"),
    [
        ("duong huyet ong nha toi thap con hai cham may, ngam nuoc duong khong nuot", True),
        ("đường huyết của mẹ còn hai chấm mấy, gọi không tỉnh", True),
        ("đường huyết sáng nay sáu chấm mấy, vậy bình thường không", False),
    ],
)
def test_a_glucose_said_point_something_is_read(text, emergency):
    """A glucose said "hai chấm mấy" (two point something, dictated) is read at its middle, 2.5: under 3.0 whatever
    the decimal was."""
    assert ("hypoglycaemia" in triage(text, default_rules(), model=None).categories) is emergency


@pytest.mark.parametrize(
    ("text", "bite"),
    [
        ("thế còn lúc đói 5.5 thì sao", False),
        ("duong huyet con luc doi 6.8 co cao khong", False),
        ("thuốc này còn lúc cần thì uống thêm được không", False),
        ("con lục cắn vào chân bố em", True),
        ("bo em bi ran luc can o bap chan", True),
    ],
)
def test_and_when_fasting_is_no_pit_viper(text, bite):
    """'còn lúc đói' (and fasting?), asked every day in a diabetes chat, folds like 'con lục đói', and 'còn lúc cần'
    (and when needed?) like 'con lục cắn': a bare pit viper is read after 'bị' or 'rắn', or typed with its marks."""
    assert ("bite_sting" in triage(text, default_rules(), model=None).categories) is bite


def card(text: str, **kw: object) -> str:
    verdict = triage(text)
    assert verdict.is_emergency, text
    return answer(verdict, **kw)  # type: ignore[arg-type]


def test_the_card_says_115_first_then_steps_then_the_clinic():
    text = card("bố tôi đau ngực dữ dội lan ra cánh tay trái", clinic_phone="028 3999 1234")
    first_lines = text.split("\n\n")[:2]
    assert "CẤP CỨU" in first_lines[0] and "115" in first_lines[1]
    assert text.index("115") < text.index("Trong lúc chờ cấp cứu") < text.index("028 3999 1234")
    assert "028" not in card("bố tôi đau ngực dữ dội lan ra cánh tay trái")


@pytest.mark.parametrize(
    ("text", "must", "must_not"),
    [
        # choking: back blows and thrusts, not the breathing-difficulty tip
        ("con tôi 3 tuổi bị hóc kẹo, không thở được", ["vỗ", "lưng", "ép bụng"], ["xịt"]),
        # unresponsive and not breathing: compressions, not only the recovery position
        ("bố tôi ngã gục, bất tỉnh, không thở", ["ép tim"], []),
        # electric shock: power off before touching
        ("chồng tôi bị điện giật ngất rồi", ["điện"], []),
        # poisoning: do not make them vomit
        ("bé uống nhầm nước tẩy bồn cầu", ["không móc họng", "cho nôn"], []),
        # burns: cool running water, nothing put on it
        ("con bị bỏng nước sôi cả cánh tay", ["nước", "20 phút"], []),
        # vomiting blood: not "press on the bleeding"
        ("ông tôi nôn ra máu nhiều", [], ["ép chặt", "đè chặt", "ấn chặt"]),
        # hypoglycaemia: sugar only when awake and able to swallow, nothing by mouth otherwise
        (
            "mẹ bị tiểu đường, hạ đường huyết, lơ mơ gọi không tỉnh",
            ["còn tỉnh", "không đổ"],
            ["tăng đường huyết"],
        ),
    ],
)
def test_first_aid_fits_the_case(text, must, must_not):
    steps = card(text).lower()
    for word in must:
        assert word in steps, (word, steps)
    for word in must_not:
        assert word not in steps, (word, steps)


def test_suicide_gets_compassion_a_crisis_line_and_115_if_something_was_taken():
    text = card("em không muốn sống nữa, tối nay em sẽ uống hết thuốc ngủ")
    assert "096 306 1414" in text and "115" in text
    assert "đã uống thuốc" in text and "CẤP CỨU" not in text.split("\n")[0]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("nhiễm toan ceton là gì ạ, sao bác sĩ cứ dặn hoài", "hyperglycaemia"),  # what is ketoacidosis?
        (
            "bố em đang nằm viện vì đột quỵ, giờ ăn uống thế nào cho tốt",
            "stroke",
        ),  # in hospital, asking about diet
    ],
)
def test_a_question_the_model_doubts_gets_its_answer_and_115_only_in_case(text, category):
    # the rules alone (the model not ready yet, at start-up) send the card
    assert triage(text, default_rules(), model=None).categories == (category,)
    result = triage(text)
    assert not result.is_emergency and result.doubted == (category,) and category in result.topics
    line = answer(result)
    assert line.startswith("⚠️ Nếu ngay lúc này") and "115" in line and "Trong lúc chờ" not in line
    assert answer(result, clinician=True).startswith("🚨 Lưu ý cấp cứu")  # a clinician still gets the card


@pytest.mark.skipif(not FAQ_VAL.is_file(), reason="../shared/eval/faq-val not present")
def test_suicidal_thoughts_told_as_a_question_are_never_doubted():
    # A real forum message (faq-val val-00865): "am I depressed? when idle, the first thing I think of is suicide".
    # The model, which learnt from chat messages, puts it near 0; it still gets the crisis answer.
    queries = {
        q["query_id"]: q["query"] for q in map(json.loads, FAQ_VAL.read_text(encoding="utf-8").splitlines())
    }
    text = queries["val-00865"]
    assert default_model().probability(text) < DOUBT
    result = triage(text)
    assert result.categories == ("suicide",) and not result.doubted
    assert "096 306 1414" in answer(result)


def test_a_flag_on_a_few_words_is_never_doubted():
    # Three words leave the model almost nothing to read: it puts "mushroom poisoning" near 0, as an earlier fit put
    # "tia uong thuoc co" (father drank herbicide) under the doubt (docs/triage.md, "The doubt on short messages").
    text = "ngộ độc nấm"
    assert default_model().probability(text) < DOUBT
    result = triage(text)
    assert result.categories == ("poisoning",) and not result.doubted
    assert answer(result).startswith("🚨")


def test_clinician_card_is_short_and_says_115():
    text = answer(triage("bệnh nhân đang co giật"), clinician=True)
    assert "115" in text and len(text) < 400


def test_every_card_fits_one_telegram_message():
    rules = default_rules()
    for row in (r for r in DEV_SET if r["emergency"]):
        verdict = triage(row["text"], rules)
        if verdict.is_emergency:
            assert len(answer(verdict, clinic_phone="0" * 12)) < 4096


@pytest.mark.parametrize(
    "text",
    [
        "my toddler is choking on a grape, can't breathe, turning blue",
        "my dad has crushing chest pain and is sweating a lot",
        "my grandma suddenly can't lift her arm and her face is drooping",
        "my kid drank some bleach",
        "he doesnt respond and isnt breathing",
        "my son cant breath, lips blue, inhaler not working",
        "mẹ em bị stroke, méo miệng",
        "i have been collecting my pills for weeks, tonight is the night",
    ],
)
def test_english_and_mixed_emergencies_are_caught(text):
    assert triage(text).is_emergency


@pytest.mark.parametrize(
    "text",
    [
        "my dad had a stroke 2 years ago, what should he eat",  # past
        "i had chest pain last week, the doctor said it's fine",  # past, seen by a doctor
        "what should I do if someone is choking",  # asked in advance
        "how to recognise a heart attack",
        "he is not short of breath and has no chest pain anymore",  # negation
        "I'm dying of boredom at work lol",  # figurative
        "my cat is having a seizure",  # an animal
        "a bit short of breath after running, is that normal",  # exertion only
        "my tooth hurts, what should I do",  # an ordinary question: the model once took English for alarm
        "I have a toothache since yesterday, what should I do?",
    ],
)
def test_english_negation_past_questions_and_idioms_raise_no_alarm(text):
    default_model().warm_up(wait=True)  # the rules and the trained model, as the product runs them
    assert not triage(text).is_emergency
