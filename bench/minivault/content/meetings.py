"""Meetings/<year>/: meeting notes 2024-2026, plus the recurring reading group note.

Notes are hand-written bullet points; the writer adds attendees, agenda, decision links (from the
decision table: every ADR names the meeting it came from), action items and varied framing."""

from __future__ import annotations

from .common import bullets, human, link, sections, weekday

# Short aliases used in the tables below.
JB, HM, MO, PR, TW, AJ, RA, SC, DV, KM = ("Jonas Brandt", "Hélène Marchetti", "Mirela Okafor", "Priya Raman",
                                          "Tomasz Wieczorek", "Aino Järvinen", "Rafael Azevedo", "Sofía Castaño",
                                          "Dmitri Volkov", "Kwame Mensah")
IS, YD, BL, OL, NH, CW, MK, LE, FA, ZB = ("Ingrid Solberg", "Yusuf Demir", "Beatriz Lobo", "Oskar Lindqvist",
                                          "Nadia Haddad", "Chen Wei", "Marta Kowalczyk", "Lars Eriksen",
                                          "Femi Adeyemi", "Zoë van der Berg")
MR, AV, GP, EY, RO, HP = ("Mateus Ribeiro", "Anouk Visser", "Gustavo Paiva", "Elif Yıldız", "Ruairí Ó Briain", "Hannah Pohl")

MEETINGS = [
    dict(title="2024-02-20 Board meeting", kind="board", who=[JB, HM, RO], projects=[],
         agenda=["Q4 2023 numbers", "Series A process", "Lisbon office"],
         points=[
             "Revenue for 2023 came in at €3.9 million, slightly above plan; gross margin 21%.",
             "Series A: two term sheets on the table. [[Ruairí Ó Briain]] recommends the one with the smaller valuation and the better board terms. Target close in March, €12 million.",
             "Lisbon office opened this month with two people; board asks for a hiring plan by the next meeting.",
             "Ruairí asked what would make this a ten times bigger company. Jonas: owning the temperature data, not the trucks.",
         ],
         actions=[(HM, "circulate final Series A documents", "2024-03-01"), (JB, "Lisbon hiring plan for the board", "2024-05-15")]),
    dict(title="2024-03-05 Remote work policy discussion", kind="policy", who=[JB, ZB, MO, HM], projects=[],
         points=[
             "Survey of 21 people: 12 want fewer than three office days, 6 want more structure, 3 do not care.",
             "New joiners in 2023 rated their onboarding 5.8 out of 10; most comments mention learning by overhearing, which does not happen remotely.",
             "Mirela worried about engineers who moved far away; agreed that contracts signed as remote stay remote.",
             "Zoë proposed fixed days so that people are in on the same days, not just a number of days.",
         ],
         actions=[(ZB, "write up the policy and announce at all-hands", "2024-03-11"), (ZB, "repeat the survey in a year", "2025-03-31")]),
    dict(title="2024-04-16 Cloud region review", kind="architecture", who=[IS, TW, MO, HM], projects=["Halyard"],
         points=[
             "Requirements: EU data residency, managed Postgres, managed Kubernetes, good instance availability.",
             "Ireland and Frankfurt both fit. Ireland is what Ingrid and Tomasz have run before; Frankfurt is a little cheaper for some instance types.",
             "Hélène asked for the price difference as a range: €300 to €900 a month at today's size. Not worth the unfamiliarity.",
             "Backups must be in a second EU region regardless.",
         ],
         actions=[(IS, "set up the landing zone and networking", "2024-05-10"), (TW, "migration plan for the telemetry database", "2024-05-24")]),
    dict(title="2024-05-21 Mobile framework choice", kind="architecture", who=[CW, PR, MO, BL], projects=["Mooring"],
         points=[
             "Options: native Android first, React Native, Flutter.",
             "Chen is the only mobile developer; three web developers know React. With React Native we could ship in about three months.",
             "Beatriz asked about drivers' phones: the subcontracted drivers often use old budget Android phones. Nobody has data yet; Chen will collect device stats from the current third-party app.",
             "Risk noted: background sync relies on a community library.",
         ],
         actions=[(CW, "collect device statistics from drivers", "2024-06-04"), (BL, "first screens for the route view", "2024-06-11")]),
    dict(title="2024-06-11 Message broker evaluation", kind="architecture", who=[TW, IS, MO], projects=["Halyard"],
         points=[
             "Current telemetry volume about 1,500 readings per second; the plan says 5,000 by the end of 2024.",
             "Tomasz compared RabbitMQ, Kafka and a managed queue. Kafka is the better long-term fit, but three brokers plus operations for our volume is a lot of work for a team of two.",
             "Ingrid: we already page on RabbitMQ; adding another system to the rotation now is a bad idea.",
             "Agreed to set a revisit trigger at 10,000 readings per second.",
         ],
         actions=[(TW, "queue topology and dead-letter setup", "2024-06-25"), (IS, "dashboards for queue depth", "2024-06-25")]),
    dict(title="2024-07-02 Q3 2024 planning", kind="planning", who=[JB, MO, PR, KM, LE, HM], projects=["Halyard", "Spinnaker", "Tiller"],
         agenda=["Review Q2", "Company goals for Q3", "Team commitments"],
         points=[
             "Q2 review: 8 of 11 commitments delivered; Halyard beta slipped by three weeks because of logger delivery times.",
             "Company goals for Q3: first trailer streaming live in Halyard, Spinnaker feasibility study done, portal onboarding for first customers.",
             "Lars wants the portal ready for a pharma tender due in September; Priya says only the read-only view is realistic.",
             "Hiring: two backend engineers and one designer approved; the designer will be in Lisbon.",
             "Jonas' question of the day: which commitment would you cut first? Most people said the Spinnaker study. It stayed.",
         ],
         actions=[(PR, "portal scope for the September tender", "2024-07-16"), (ZB, "open the two backend roles", "2024-07-09")]),
    dict(title="2024-07-23 Thermora vendor call", kind="vendor", who=[GP, PR, HM], projects=["Halyard", "Lanyard"],
         points=[
             "Thermora presented their LTE-M logger; price at 500 units €74, at 2,000 units €66.",
             "Calibration certificates per unit, traceable to a national lab. Exactly what our pharma customers ask for.",
             "Gustavo asked about operating range: specified for −20 to +50 °C ambient, but batteries were tested only up to 35 °C. They will send data.",
             "Firmware is closed; they offered to add features 'on request', no timeline.",
         ],
         actions=[(GP, "get heat test data from the vendor", "2024-08-06"), (HM, "purchase order for 500 units", "2024-07-30")]),
    dict(title="2024-08-20 Telemetry storage review", kind="architecture", who=[TW, FA, IS], projects=["Halyard"],
         points=[
             "Readings table at 400 GB; 30-day charts take eight seconds, 90-day charts time out.",
             "Options: partitioned Postgres, TimescaleDB, ClickHouse. Femi likes ClickHouse for analytics but the team has never run it.",
             "TimescaleDB gives compression and continuous aggregates while keeping SQL and joins; it is an extension on our managed Postgres, so no new service to operate.",
             "Decided to revisit if storage or query time become a problem again.",
         ],
         actions=[(TW, "migrate readings into hypertables", "2024-09-15"), (FA, "continuous aggregates for charts", "2024-09-30")]),
    dict(title="2024-09-10 On-call retro", kind="retro", who=[IS, MO, TW, YD], projects=["Bosun"],
         points=[
             "August: 134 pages, 41 of them at night. Tomasz got 60 of them.",
             "Most pages come from queue depth alerts that resolve themselves within five minutes.",
             "Yusuf said he never knows whether he is expected to answer at night; there is no rotation, just a habit.",
             "Ingrid proposed a formal rotation with an allowance and a rule that night pages earn the next morning off.",
         ],
         actions=[(IS, "rotation schedule and on-call policy", "2024-09-17"), (TW, "delete or fix the ten noisiest alerts", "2024-09-30")]),
    dict(title="2024-10-08 Lisbon offsite", kind="offsite", who=[JB, HM, MO, PR, RA, ZB, KM, LE], projects=[],
         agenda=["Strategy 2025", "Iberia", "Team"],
         points=[
             "Two days in Lisbon for the whole company, 23 people. The agenda was drafted by [[Zoë van der Berg]], who kept every session under ninety minutes.",
             "Strategy session: Jonas presented the three-year plan; biggest debate was whether to own warehouses. Rafael made the case for a cold cross-dock near Lisbon.",
             "Evening: the whole team cooked cataplana together in a rented kitchen in Alfama, with a chef from the neighbourhood directing. Best team event so far, according to the feedback form.",
             "Second day: team sessions. Engineering agreed to write down on-call expectations and to start a reading group.",
         ],
         actions=[(RA, "business case for a Lisbon warehouse", "2024-12-01"), (TW, "start the engineering reading group", "2024-11-01")]),
    dict(title="2024-11-12 Alert threshold workshop", kind="workshop", who=[PR, TW, LE, KM], projects=["Halyard"],
         points=[
             "Beta customers received 1,800 temperature alerts in October. Priya sampled 100: 83 were door openings at delivery.",
             "Lars: pharma customers want to know about real problems quickly, but they stop reading if every delivery produces an alert.",
             "Kwame: drivers call dispatch for every alert on their phone; it takes 20 minutes a day of dispatcher time.",
             "Options: a delay before alerting, suppressing alerts near the delivery geofence, or both. Geofence suppression is harder; start with a delay.",
         ],
         actions=[(TW, "implement alert delay", "2024-11-26"), (PR, "tell beta customers about the change", "2024-11-27")]),
    dict(title="2024-11-26 Customer advisory board", kind="customer", who=[PR, LE, JB, KM], projects=["Halyard", "Tiller"],
         agenda=["What we built this year", "What customers want next", "Pricing feedback"],
         points=[
             "Six customers attended in person in Rotterdam, including quality managers from two pharma companies and the head of logistics at a produce importer.",
             "Top request from pharma: a complete temperature record per shipment that they can attach to batch release, without asking us by email.",
             "Top request from food customers: fewer alerts for door openings at delivery, and an ETA they can trust for their dock planning.",
             "Everyone wants an API; only two would use it in the next six months.",
             "Pricing feedback: the four different pricing structures make our offers hard to compare with competitors.",
         ],
         actions=[(PR, "portal roadmap draft based on the feedback", "2024-12-13"), (LE, "thank-you notes and summary to attendees", "2024-11-29")]),
    dict(title="2024-12-03 Black Friday spike post-mortem", kind="postmortem", who=[IS, TW, YD, PR], projects=["Bosun", "Halyard"],
         points=[
             "On Black Friday, 29 November, a retail customer's promotion tripled bookings in two hours; the booking API slowed to 12-second responses and the portal timed out for 47 minutes.",
             "Cause: a missing index on the bookings table plus an unbounded retry loop in the partner integration, which hammered the API harder as it slowed down.",
             "Detection was late because the only alert was on error rate, and slow requests are not errors.",
             "Fixes: the index, a retry budget in the integration client, a latency alert. The runbooks written during the incident now live in [[Bosun]] and are linked from the alerts.",
         ],
         actions=[(YD, "retry budget in partner client", "2024-12-10"), (IS, "latency SLO and alert for the booking API", "2024-12-17")]),
    dict(title="2024-12-17 Pricing review", kind="commercial", who=[HM, LE, JB], projects=["Capstan"],
         points=[
             "Hélène showed margins per pharma customer: from 4% to 31%, with four different pricing structures.",
             "Lars: tenders compare per-pallet prices; everything else makes us hard to compare and easy to reject.",
             "Concern raised by Jonas: small urgent shipments. Parked; the volume is low today.",
             "Billing will need per-pallet lines and surcharges; Yusuf to be told before the Capstan kickoff.",
         ],
         actions=[(HM, "new rate card", "2025-01-10"), (LE, "brief sales team on per-pallet quoting", "2025-01-15")]),
    dict(title="2025-01-14 Q1 2025 planning", kind="planning", who=[JB, MO, PR, KM, SC, HM, RA], projects=["Halyard", "Bowline", "Jib", "Capstan"],
         agenda=["Review Q4", "Company goals Q1", "Commitments"],
         points=[
             "Q4 review: 9 of 12 commitments delivered. The Black Friday outage cost us one retail pilot.",
             "Company goals: Bowline live for the first country, Jib kickoff, Capstan started, Halyard beta to seven customers.",
             "Sofía argued for doing all three customs countries at once; the team is two people, so one country first.",
             "Ballast started: Hélène pointed out the cloud bill is larger than the Lisbon payroll.",
         ],
         actions=[(SC, "Bowline requirements for Dutch declarations", "2025-01-31"), (IS, "cloud cost review", "2025-02-14")]),
    dict(title="2025-01-21 Mooring rewrite discussion", kind="architecture", who=[CW, PR, MO, BL, MK], projects=["Mooring"],
         points=[
             "Crash-free sessions at 97.1%; almost all crashes on Android 9 and 10 phones with 2 GB of memory, mostly in the photo flow.",
             "The background sync library has had no release in 14 months and its maintainer has archived the repository.",
             "Chen's two-week prototype of the photo flow in Flutter: half the memory, start-up 2.1 seconds on the worst test phone versus 6.4.",
             "Marta asked for a test device lab of five old phones before any rewrite starts. Approved.",
         ],
         actions=[(CW, "rewrite plan, screen by screen", "2025-02-04"), (MK, "buy and set up test phones", "2025-02-07")]),
    dict(title="2025-01-28 Lisbon warehouse kickoff", kind="kickoff", who=[RA, JB, OL, KM, AV], projects=["Jib"],
         points=[
             "Lease for the Alverca building signed on 20 January: ten years, break after five.",
             "Refrigeration contractor quotes five months for two cold rooms and the dock shelters.",
             "Oskar walked the building last week: the roof insulation needs replacing before cold rooms go in, and the floor near door 9 is uneven.",
             "Anouk: the operating licence is issued by the municipality; ask early which fire-safety documents they want.",
         ],
         actions=[(RA, "order refrigeration", "2025-02-28"), (OL, "warehouse layout draft", "2025-02-21"), (AV, "licence requirements from the municipality", "2025-02-14")]),
    dict(title="2025-02-11 1-1 with Priya", kind="one-on-one", who=[PR], projects=["Halyard"],
         points=[
             "Priya is worried that the logger vendor problem will delay everything in [[HAL]]; she wants a decision this month.",
             "She asked for help getting Tomasz's time for product reviews; he is pulled into every incident.",
             "Career: she would like to manage a second product manager in 2026.",
             "Feedback for me: decisions in engineering meetings are not written down quickly enough.",
         ],
         actions=[(PR, "draft the vendor decision memo", "2025-02-18")]),
    dict(title="2025-02-18 Board meeting", kind="board", who=[JB, HM, RO], projects=[],
         agenda=["2024 results", "Plan 2025", "Lisbon warehouse"],
         points=[
             "2024 revenue €5.8 million, up 49%. Cash at the end of the year €8.2 million.",
             "Board approved the Lisbon warehouse budget of €1.9 million, with Ruairí asking for a monthly update on the fit-out.",
             "Ruairí pushed for a Series B conversation in 2026; Jonas prefers to show Halyard as a product first.",
             "Hélène presented runway scenarios: 26 months on plan, 19 months if Iberian growth stalls.",
         ],
         actions=[(JB, "monthly Jib update to the board", "2025-03-15")]),
    dict(title="2025-02-25 Sensor vendor switch", kind="vendor", who=[GP, PR, HM, TW], projects=["Halyard", "Lanyard"],
         points=[
             "Field failures since August: 23 units, all in trailers that stood in strong sun; two stopped reporting mid-trip.",
             "Eight-week trial with the Tallinn vendor's units on the Seville lanes: zero failures, readings matched our reference probes within 0.2 °C.",
             "Hélène: writing off the remaining units costs about €33,000. She asked for the cost of doing nothing: more failures, a lost customer, claims.",
             "Gustavo confirmed our firmware can be ported to the new hardware in about eight weeks.",
         ],
         actions=[(GP, "rollout plan for the new loggers", "2025-03-14"), (HM, "negotiate the three-year supply agreement", "2025-03-21")]),
    dict(title="2025-03-04 Hiring plan 2025", kind="planning", who=[MO, ZB, HM, RA], projects=[],
         points=[
             "Budget for seven hires in 2025: two SREs (one in Lisbon), one data engineer, one backend engineer, one warehouse lead for Lisbon, two warehouse operators.",
             "Time to hire for engineers was 71 days on average in 2024; the goal is 50.",
             "Zoë wants a structured interview loop with written debriefs for every role, and a buddy for every new hire.",
             "The Lisbon SRE role should be open to career changers with strong operations backgrounds.",
         ],
         actions=[(ZB, "interview loop templates", "2025-03-18"), (MO, "job descriptions for both SRE roles", "2025-03-11")]),
    dict(title="2025-03-11 Broker migration review", kind="architecture", who=[TW, IS, MO, YD], projects=["Halyard"],
         points=[
             "Telemetry passed 9,000 readings per second in February; the trigger agreed last June was 10,000, and we will pass it in April.",
             "Three incidents in January where a slow consumer made queues grow until memory alarms blocked the gateway.",
             "We cannot replay readings after a consumer bug; last month a bug in the ETA service lost two hours of estimates.",
             "Ingrid agreed on the condition that the cluster gets dedicated nodes and a runbook before it carries production traffic.",
         ],
         actions=[(TW, "cluster design and sizing", "2025-03-25"), (IS, "runbook and alerts for the new cluster", "2025-04-08")]),
    dict(title="2025-03-18 Reefer alarm post-mortem", kind="postmortem", who=[IS, GP, TW, OL, KM, MK], projects=["Lanyard", "Halyard"],
         points=[
             "Between 24 February and 14 March, temperature alarms from 31 loggers were silently dropped. Readings arrived, alarm events did not.",
             "Found by [[Oskar Lindqvist]] at the Maasvlakte depot when a cold room check showed a trailer at 11 °C that had raised no alarm in the portal.",
             "Root cause: a buffer rollover bug in the [[Lanyard]] firmware released in February. When the ring buffer wrapped, queued alarm events were overwritten before being sent.",
             "Impact: two pharma loads quarantined by the customer, one released after assessment, one destroyed (value about €18,000).",
             "Contributing factor: the firmware change had one reviewer and was never run on the hardware test rig.",
         ],
         actions=[(GP, "fix and staged rollout", "2025-03-21"), (MK, "rollover case in the hardware-in-the-loop tests", "2025-03-28"), (IS, "alert when a logger sends readings but no heartbeat events", "2025-04-04")]),
    dict(title="2025-04-08 Alert threshold revisit", kind="workshop", who=[PR, TW, LE, KM, HP], projects=["Halyard"],
         points=[
             "Since the ten-minute delay, alert volume is down 78%, but a fresh-produce customer still muted all alerts in February.",
             "Two pharma customers asked for earlier alerts for biologics; ten minutes out of the fridge can matter for some products.",
             "[[Hannah Pohl]] joined for the first half hour and suggested thinking in terms of product stability budgets rather than fixed minutes.",
             "Agreed on delays per product class as a step towards that; stability budgets later.",
         ],
         actions=[(TW, "product class configuration", "2025-04-29"), (LE, "tell pharma customers", "2025-05-02")]),
    dict(title="2025-05-06 All-hands", kind="allhands", who=[JB, HM, MO, PR, RA, ZB, KM, LE], projects=[],
         points=[
             "Q1 results: revenue 12% above plan, driven by Iberian lanes; two new pharma customers signed.",
             "Welcome to four new people, including [[Mateus Ribeiro]] in Lisbon and two warehouse operators at the Maasvlakte.",
             "Jonas on the warehouse in Portugal: refrigeration ordered, building work on schedule, opening date unchanged for now.",
             "Mirela: the telemetry pipeline now runs in parallel on the new broker; cut-over in two weeks.",
             "Zoë: the engagement survey response rate was 91%; the lowest score was for 'I know how decisions are made', which leadership took as a fair hit.",
         ],
         actions=[(ZB, "publish the survey results and the three actions", "2025-05-16"), (MO, "explain how engineering decisions are recorded", "2025-05-20")]),
    dict(title="2025-05-13 Halyard steering", kind="steering", who=[PR, TW, JB, LE, GP], projects=["Halyard"],
         points=[
             "Kafka migration: both paths running in parallel since 22 April; cut-over planned for 20 May.",
             "Logger replacement: 410 of about 1,100 units swapped to the new vendor.",
             "Lars needs a general-availability date for two tenders in July.",
             "Priya proposed December; Tomasz says it depends on the storage question, which is not decided.",
         ],
         actions=[(PR, "GA proposal for the next steering", "2025-06-03")]),
    dict(title="2025-06-03 Halyard steering", kind="steering", who=[PR, TW, JB, LE, GP, IS], projects=["Halyard"], embed=True,
         points=[
             "Kafka cut-over done on 20 May without data loss. Lag under two seconds at peak.",
             "Logger replacement at 720 units; finish expected in October.",
             "GA date agreed, with the condition that the storage migration does not slip past October.",
             "Ingrid raised the risk that too much is scheduled for the autumn: storage migration, region question, logger replacement.",
         ],
         actions=[(LE, "put the GA date in the July tenders", "2025-06-20"), (TW, "storage migration proposal", "2025-07-15")]),
    dict(title="2025-06-10 Verdelux escalation", kind="customer", who=[KM, JB, PR], projects=["Halyard"],
         points=[
             "A load of avocados collected near Valencia arrived at [[Verdelux]] in Barendrecht at 14 °C instead of 6 °C; the buyer rejected it.",
             "Halyard readings show the trailer was loaded warm: the product was already at 13 °C when the doors closed, and the unit never caught up.",
             "The subcontracted driver skipped the pre-cooling check because the loading slot was late.",
             "We agreed to pay half of the claim as a goodwill gesture, about €9,400, and to require a pre-cooling photo in the driver app for all produce loads.",
         ],
         actions=[(KM, "pre-cooling check for subcontractors", "2025-06-17"), (CW, "pre-cooling photo step in the driver app", "2025-07-01")]),
    dict(title="2025-06-24 On-call follow-the-sun", kind="planning", who=[IS, MO, RA, MR, TW], projects=["Bosun"],
         points=[
             "Night pages in Q2: 38, still falling on the six Rotterdam engineers.",
             "Lisbon now has four engineers who could be on call; two volunteered for a paid night arrangement.",
             "Mateus is not on the rotation yet; he will shadow from September.",
             "Handover at 10:00 on Mondays with a written summary of open incidents.",
         ],
         actions=[(IS, "new rotation schedule", "2025-07-07"), (RA, "night allowance with HR in Portugal", "2025-07-04")]),
    dict(title="2025-07-08 Q3 2025 planning", kind="planning", who=[JB, MO, PR, KM, SC, HM, RA, IS], projects=["Halyard", "Capstan", "Jib", "Ballast"],
         agenda=["Review Q2", "Company goals Q3", "Commitments", "Risks"],
         points=[
             "Q2 review: 10 of 13 commitments delivered; Kafka cut-over and the driver app rewrite were the big ones.",
             "Company goals for Q3: telemetry storage migration, Capstan ready for cut-over, Jib refrigeration finished, logger replacement at 90%.",
             "Risk list: the Lisbon operating licence, the autumn workload in platform, pricing changes landing in billing late.",
             "Compared with last year's Q3 planning, far fewer goals and more about finishing; Jonas called it a 'closing quarter'.",
             "Open items carried over from [[Q2 2025 planning]], which never got written up properly.",
         ],
         actions=[(TW, "storage migration decision", "2025-07-15"), (RA, "licence status every two weeks", "2025-07-22")]),
    dict(title="2025-07-15 Telemetry storage revisit", kind="architecture", who=[TW, FA, IS, HM], projects=["Halyard", "Ballast"],
         points=[
             "Telemetry database at 14 TB. Morning compression jobs slow ingest; 90-day charts take 20 seconds.",
             "Femi's test: the same month of readings takes 7 times less space in ClickHouse and a 90-day chart renders in 0.8 seconds.",
             "Hélène asked for the cost range: €4,000 to €6,000 a month saved, most of it storage.",
             "Joins with shipments will move to the warehouse; the portal team is fine with that.",
         ],
         actions=[(FA, "migration plan and dual writes", "2025-08-05"), (TW, "consumer batching for the new store", "2025-08-12")]),
    dict(title="2025-08-19 Pricing review", kind="commercial", who=[HM, LE, JB, YD], projects=["Capstan"],
         points=[
             "Shipments of one or two pallets lose money on per-pallet pricing; biotech customers send mostly those.",
             "Customers keep asking what happens if the temperature is not kept. A money-back service level would differentiate us.",
             "Hélène modelled SLA credits at 50% of the shipment price: cost about 0.3% of revenue at 2025 excursion rates. The numbers will go into the [[Pharma pricing sheet 2026]].",
             "Yusuf: billing can support size classes and credits by November if the rules are frozen by mid-September.",
         ],
         actions=[(HM, "final rate card", "2025-09-12"), (YD, "billing changes for size classes and credits", "2025-11-01")]),
    dict(title="2025-09-02 Engineering reorg", kind="org", who=[MO, TW, IS, FA, PR], projects=[],
         points=[
             "Proposal: reorganise engineering from component teams (backend, frontend, mobile, data) into three product teams around tracking, routing and billing, plus one platform team.",
             "Each product team owns its services in production, including being on call for them.",
             "Concern from Ingrid: platform becomes a ticket queue. Mitigation: platform offers self-service tools, not tickets.",
             "Femi asked who owns shared data models; answer for now: the data platform, with product teams as contributors.",
             "Decision deferred to October to let people comment on the written proposal.",
         ],
         actions=[(MO, "written proposal to all engineers", "2025-09-09"), (TW, "service ownership map", "2025-09-23")]),
    dict(title="2025-09-09 1-1 with Priya", kind="one-on-one", who=[PR], projects=["Halyard"],
         points=[
             "The GA date looks shaky; region move and logger replacement both land in November.",
             "She wants to raise it at the next steering rather than wait for October.",
             "Good news: two beta customers have asked for the portal's single sign-on and would pay for it.",
         ],
         actions=[(PR, "risk section for the steering document", "2025-09-26")]),
    dict(title="2025-09-16 Cloud region move", kind="architecture", who=[IS, TW, HM, AV], projects=["Ballast", "Halyard"],
         points=[
             "Two German pharma customers require hosting in Germany in contracts starting in 2026.",
             "Ingrid's estimate: six weeks of work, one maintenance window of about two hours.",
             "Price comparison for our instance mix shows Frankfurt about €2,500 a month cheaper after the storage migration.",
             "Anouk checked the data-processing agreements: customers must be notified 30 days before the move.",
         ],
         actions=[(AV, "customer notifications", "2025-09-30"), (IS, "migration runbook", "2025-10-10")]),
    dict(title="2025-09-23 Jib status review", kind="status", who=[RA, JB, OL, KM], projects=["Jib"],
         points=[
             "Refrigeration fit-out finished in August; cold rooms held temperature in a two-week test.",
             "The operating licence is still missing. The fire brigade wants a new fire-safety plan because the insulation panels changed.",
             "Rafael: realistic licence date is January, and opening during the December peak is a bad idea.",
             "Oskar will train the warehouse team in the empty building from March.",
         ],
         actions=[(RA, "submit the new fire-safety plan", "2025-10-15"), (OL, "training plan for the warehouse team", "2026-01-31")]),
    dict(title="2025-09-30 Halyard steering", kind="steering", who=[PR, TW, JB, LE, IS], projects=["Halyard"],
         points=[
             "Storage migration done on 22 September; old database read-only until December.",
             "Logger replacement at 1,050 units; the last Thermora units come out in October.",
             "Priya raised the GA risk: region move in November, GA on 1 December. Jonas asked for options at the next steering.",
             "Lars reported that one tender was won on the strength of the live tracking demo, with the GA date in the offer.",
         ],
         actions=[(PR, "GA options paper", "2025-10-21")]),
    dict(title="2025-10-07 Remote work policy revisit", kind="policy", who=[JB, ZB, MO, RA], projects=[],
         points=[
             "Survey results: Tuesday and Thursday attendance about 80%, Wednesday under 40%.",
             "Two candidates declined offers in the summer because of the three-day rule.",
             "Rafael: Lisbon should follow the same days so that cross-office meetings can be in person on both sides of the call.",
             "Mirela keeps the meeting-free Wednesday afternoon.",
         ],
         actions=[(ZB, "announce the new policy", "2025-10-13")]),
    dict(title="2025-10-21 Halyard steering", kind="steering", who=[PR, TW, JB, LE, IS], projects=["Halyard"], embed=True,
         points=[
             "Options paper: GA in December without the region move, GA in December with a risky double change, or GA in March.",
             "Lars can live with March if the tenders get a written commitment.",
             "Tomasz wants the extra time for load testing, which has never been done at three times current traffic.",
         ],
         actions=[(LE, "update the two tenders", "2025-10-31"), (TW, "load test plan", "2025-11-14")]),
    dict(title="2025-10-28 Kafka disk full incident review", kind="postmortem", who=[IS, TW, MR, FA], projects=["Halyard", "Bosun"],
         points=[
             "On Sunday 26 October at 03:12 UTC two brokers ran out of disk; ingestion of logger readings stopped for 23 minutes.",
             "Cause: uploads of old log segments to object storage had been failing silently for four days after a credentials rotation, so segments piled up on local disks.",
             "The disk alert at 85% fired on Saturday evening but was routed to a channel nobody watches at weekends, not to the pager.",
             "[[Mateus Ribeiro]] was on his second night shift, found the cause within twelve minutes using the runbook, and restored uploads; loggers re-sent their buffered readings, so no data was lost.",
             "Follow-ups: page on upload failures, not only on disk usage; move the disk alert to the pager; credentials rotation gets a checklist.",
         ],
         actions=[(IS, "alert routing review for all storage alerts", "2025-11-07"), (TW, "monitor segment upload lag", "2025-11-07"), (MR, "update the runbook with this case", "2025-11-04")]),
    dict(title="2025-11-04 Farmanova audit debrief", kind="customer", who=[AV, LE, OL, GP, JB], projects=["Gaff"],
         points=[
             "[[Farmanova]] audited us on 29 and 30 October against GDP. Result: no major findings, two minor ones.",
             "Minor finding 1: calibration certificates for two loggers in cold room 1 had expired in September.",
             "Minor finding 2: training records incomplete for a temporary warehouse worker.",
             "The auditor praised the deviation log and the temperature mapping report.",
             "Corrective actions are due within 30 days.",
         ],
         actions=[(GP, "calibration tracking with reminders", "2025-11-28"), (OL, "training records for temporary staff", "2025-11-28")]),
    dict(title="2025-11-18 Bowline expansion", kind="planning", who=[SC, YD, RA, MO], projects=["Bowline"],
         points=[
             "Dutch declarations stable for nine months; rejection rate 0.8%.",
             "Iberian filings are manual and now produce most of our customs errors, 14 in October alone.",
             "The Sines lane adds about 30 Portuguese import declarations a month.",
             "Sofía proposed consolidating to one Iberian broker that has an API.",
         ],
         actions=[(SC, "select the Iberian broker", "2025-12-19"), (YD, "integration estimate", "2025-12-12")]),
    dict(title="2025-11-25 Capstan cut-over retro", kind="retro", who=[YD, HM, FA, MO], projects=["Capstan"],
         points=[
             "Cut-over on 3 November after four weeks of running old and new invoicing in parallel; differences were reconciled daily.",
             "First real run produced 1,391 invoices; 12 were wrong, all because of contract terms encoded incorrectly, none because of the software.",
             "The parallel run caught 37 differences, 31 of which were errors in the old spreadsheet process.",
             "Hélène wants contract terms entered by sales in a structured form, not free text, from January.",
             "Yusuf goes back to customs work part-time from December.",
         ],
         actions=[(HM, "structured contract terms form with sales", "2026-01-15"), (YD, "hand over Capstan on-call notes", "2025-12-05")]),
    dict(title="2025-12-02 Halyard steering", kind="steering", who=[PR, TW, JB, LE], projects=["Halyard"],
         points=[
             "Region move completed on 25 November with a 1 h 50 min maintenance window.",
             "Load test plan ready; first run in the week of 8 December.",
             "Two pharma customers asked whether single sign-on will be available at GA.",
             "Old telemetry database switched off after three months read-only; nobody asked for it.",
         ],
         actions=[(TW, "first load test results", "2025-12-16"), (PR, "ask Nadia about SSO timeline", "2025-12-05")]),
    dict(title="2025-12-09 Phishing incident review", kind="postmortem", who=[NH, IS, MO, ZB], projects=["Cleat"],
         points=[
             "On 4 December an employee entered their password on a fake login page sent as a shipping notification.",
             "The attacker logged into the shared mailbox for customs documents for about 40 minutes before the session was revoked.",
             "No evidence of data leaving the mailbox, but we notified the two affected customers as a precaution.",
             "The mailbox was not behind single sign-on and had no MFA. Cleat's timeline is accelerated.",
         ],
         actions=[(NH, "MFA on every remaining account", "2025-12-19"), (ZB, "security awareness session in January", "2026-01-16")]),
    dict(title="2026-01-13 Q1 2026 planning", kind="planning", who=[JB, MO, PR, KM, SC, HM, RA, IS, NH], projects=["Halyard", "Bowline", "Cleat", "Jib"],
         agenda=["Review Q4", "Company goals Q1", "Commitments"],
         points=[
             "Q4 review: 8 of 12 commitments delivered; region move and Capstan cut-over done, load testing late.",
             "Company goals for Q1: Halyard ready for GA, Bowline in Portugal, every internal tool behind single sign-on, Jib team hired.",
             "Hélène: runway at 22 months; the board wants a Series B decision by the summer.",
             "Nadia asked for one engineer from each team for a day to finish the SSO migrations.",
         ],
         actions=[(NH, "SSO migration schedule per team", "2026-01-20"), (SC, "Portuguese declarations in Bowline", "2026-03-31")]),
    dict(title="2026-01-20 Halyard steering", kind="steering", who=[PR, TW, JB, LE, NH], projects=["Halyard"], embed=True,
         points=[
             "Load tests at three times current traffic: the alert evaluator falls 4 minutes behind during the morning reconnect storm.",
             "Fix needs a partitioning change in the evaluator; Tomasz estimates six weeks.",
             "Nadia: portal single sign-on can be ready by the end of March.",
             "Jonas: this is the last move; the date must hold.",
         ],
         actions=[(TW, "evaluator partitioning change", "2026-03-06"), (LE, "inform customers of the new date", "2026-01-23")]),
    dict(title="2026-01-27 Data retention review", kind="policy", who=[AV, TW, HM, FA], projects=["Halyard"],
         points=[
             "Raw readings are 80% of telemetry storage.",
             "Anouk reviewed all 64 customer contracts: the longest requirement for raw readings is twelve months; six years applies to the shipment temperature record, which is a separate document.",
             "Femi confirmed the per-hour rollups cover every chart older than a month.",
         ],
         actions=[(FA, "deletion job with a dry-run report", "2026-02-24"), (AV, "sign off the first deletion run", "2026-03-02")]),
    dict(title="2026-02-03 1-1 with Priya", kind="one-on-one", who=[PR], projects=["Halyard"],
         points=[
             "Priya is confident about the April date ([[ADR-033 Halyard GA moved to 13 April 2026#Decision]]) if the evaluator change lands by early March.",
             "She has started interviewing for a second product manager, approved in the Q1 plan.",
             "Asked me to join the first customer call after GA with Farmanova's quality team.",
             "We talked about how to hand over Halyard support from the project team to the regular on-call rotation after launch.",
         ],
         actions=[(PR, "share the GA launch checklist", "2026-02-10")]),
    dict(title="2026-02-10 Board meeting", kind="board", who=[JB, HM, RO, MO], projects=[],
         agenda=["2025 results", "Plan 2026", "Series B"],
         points=[
             "2025 revenue €9.6 million, up 66%. Gross margin 24%.",
             "Ruairí challenged the Halyard slips and asked for a single accountable owner for the GA date; Jonas named Priya.",
             "Series B: start conversations in May, after GA, aiming for €25–30 million.",
             "Mirela presented the engineering plan for 2026: four hires, product teams in place since November.",
         ],
         actions=[(HM, "Series B data room", "2026-04-30"), (JB, "shortlist of investors", "2026-03-31")]),
    dict(title="2026-02-17 Halyard steering", kind="steering", who=[PR, TW, LE, NH, IS], projects=["Halyard"],
         points=[
             "Evaluator partitioning change merged; second load test run next week.",
             "Launch checklist at 31 of 44 items done.",
             "Single sign-on for the portal in testing with one pharma customer.",
             "Ingrid asked for a go/no-go meeting on 30 March.",
         ],
         actions=[(IS, "go/no-go criteria", "2026-03-10"), (PR, "customer communication plan for GA", "2026-03-13")]),
]

READING_GROUP = dict(
    title="Engineering reading group", kind="recurring", who=[TW, IS, FA, YD, EY, MR],
    text=[
        ("", "A reading group for engineers, started in November 2024 after the Lisbon offsite. We read one book or a few papers at a time, a few chapters per session, and talk about what applies to us."),
        ("Practicalities", "- Every other Thursday at 16:00, in the Kade room at [[Rotterdam HQ]], with Lisbon joining by video.\n- Sessions last 45 minutes; snacks are on whoever picked the book.\n- [[Tomasz Wieczorek]] runs it; anyone can propose the next book in the channel."),
        ("What we have read", "- [[Designing Data-Intensive Applications]], November 2024 to March 2025, two chapters a session.\n- [[Release It!]], spring 2025.\n- [[Raft paper]] and [[Dynamo paper]], one session each.\n- [[Team Topologies]], autumn 2025."),
        ("What came out of it", "The retry budgets in our HTTP client came from a session on stability patterns. The outbox relay and the idempotency rules came out of the chapters on stream processing. Attendance varies from four to eleven people."),
    ],
)

KIND_TAG = {"board": "board", "policy": "policy", "architecture": "architecture", "planning": "planning", "vendor": "vendor",
            "retro": "retro", "offsite": "offsite", "workshop": "workshop", "postmortem": "postmortem", "commercial": "commercial",
            "kickoff": "kickoff", "one-on-one": "1on1", "allhands": "all-hands", "steering": "steering", "customer": "customer", "org": "org", "status": "status"}
WHO_FORMS = ["**Attendees:** {names}", "Present: {names}", "**Who:** {names}", "Attendees — {names}"]
NOTES_HEAD = ["Notes", "Discussion", "What we discussed", "Notes from the meeting", "Summary"]
ACT_HEAD = ["Action items", "Actions", "Follow-ups", "Next steps"]
DEC_FORMS = ["Decided: {links}.", "Outcome recorded in {links}.", "Decision written up as {links}."]
NO_DEC = ["No decisions taken.", "Nothing decided; discussion only.", ""]
KIND_CONTEXT = {
    "steering": ["«Bi-weekly|Regular|Fortnightly» Halyard steering. «Usual format: status, risks, decisions.|Status first, then risks, then anything that needs a decision.|Agenda as always: progress, blockers, dates.»"],
    "one-on-one": ["«How she is doing:|Energy:|Mood check:» «good, busy but fine|a bit stretched|tired but positive|upbeat, lots going on». «We used her list of topics.|Her agenda, then mine.|Mostly her topics this time.»"],
    "planning": ["«Quarterly planning,|Planning session,|Quarter planning,» «half a day|a full afternoon|three hours» «in Kade|with Lisbon on video|around the big table». «Pre-reads went out a week before.|Everyone brought a one-page team summary.|Numbers were sent in advance.»"],
    "board": ["«Quarterly board meeting|Board meeting|Board session» «in Rotterdam|in the Kade room|with Ruairí flying in from Dublin». «The board pack went out a week before.|Ruairí had sent his questions the night before.|Hélène presented the numbers.»"],
    "postmortem": ["«Blameless post-mortem.|Post-mortem, blameless format.|Incident review.» «The full timeline is in the incident doc; these are my notes.|Timeline in UTC is in the incident channel.|Ingrid facilitated and kept us on facts.»"],
    "architecture": ["«Design review|Architecture discussion|Technical decision meeting» «based on a two-page memo|with the memo sent the day before|after a week of comments on the doc». «Everyone had read it, which helped.|Half the time went to questions on the memo.|Short and focused.»"],
    "vendor": ["«Vendor call|Call with the supplier|Supplier meeting» «on video|at their office|in Kade». «Prepared a list of questions in advance.|Took longer than planned.|They sent slides afterwards.»"],
    "policy": ["«Policy discussion|Discussion of the policy|Policy review» «with the leadership team|before the all-hands|with survey results on the screen». «Mostly about data, some about feelings.|Everyone had an opinion.|Calmer than expected.»"],
    "workshop": ["«Workshop|Working session|Long working session» «with data from the beta|with a sample of real alerts|around a whiteboard». «We went through examples one by one.|Lots of arguing, in a good way.|Priya facilitated.»"],
    "retro": ["«Retro|Retrospective|Look back» «on the last few months|on the summer|on how things have been going». «Honest and a bit tense.|People were frank.|Good energy despite the topic.»"],
    "offsite": ["«Company offsite|Offsite|Team offsite», «two days|two full days|Tuesday and Wednesday». «Everyone flew in on Monday evening.|The Rotterdam group came on the same flight.|First offsite with the whole company in one place.»"],
    "commercial": ["«Commercial review|Pricing discussion|Commercial meeting» «with the margin spreadsheet on the screen|based on Hélène's model|with the sales numbers for the year». «Sharp questions from Jonas.|Long, but we got there.|Some tension between sales and finance, productive.»"],
    "kickoff": ["«Kickoff|Project kickoff|Start of the project» «at the building|in Lisbon|with everyone on site». «Site walk first, then the meeting.|Good energy.|Lots of unknowns listed.»"],
    "customer": ["«Customer meeting|Meeting with the customer|Debrief after the customer meeting» «on video|at their office|in Kade». «Tense at first, constructive by the end.|Well prepared on our side.|We brought the data, which helped.»"],
    "org": ["«Leads meeting|Discussion with the leads|Organisation discussion» «with a written proposal as the pre-read|after a month of one-to-one conversations|in Kade». «Lots of questions, no fights.|Good discussion, nothing final.|People were open about their worries.»"],
    "allhands": ["«Monthly all-hands|All-hands|Company all-hands», «everyone in the big room with Lisbon on screen|hybrid, about half in the room|Monday morning as usual». «Jonas hosted.|Recording shared afterwards.|Slides were short for once.»"],
    "status": ["«Status review|Progress review|Status meeting» «on site|on video from Lisbon|in the half-finished building». «Mostly about the licence.|Short and to the point.|Not good news.»"],
}
CLOSING = ["«Next meeting|Follow-up|Next check-in» «in two weeks|next month|to be scheduled|at the usual time».",
           "Notes by me, «cleaned up the same evening|tidied the next morning|shared in the channel afterwards».", ""]
INTRO = [
    "«Chaired by|Run by|Led by|Facilitated by» {chair}.",
    "{wd}«.|, chaired by {chair}.|, run by {chair}.»",
    "",
]


def meeting_folder(title: str) -> str:
    return f"Meetings/{title[:4]}"


def register(ctx):
    mbp: dict = {}
    for m in MEETINGS:
        n = ctx.add(meeting_folder(m["title"]), m["title"], "meeting")
        n.data = m
        for p in m["projects"]:
            mbp.setdefault(p, []).append(m["title"])
    n = ctx.add("Meetings", READING_GROUP["title"], "meeting")
    n.data = READING_GROUP
    ctx.data["meetings_by_project"] = mbp


def write(ctx):
    decisions = ctx.data["decisions"]
    by_meeting: dict = {}
    for d in sorted(decisions.values(), key=lambda d: d["num"]):
        if d["meeting"]:
            by_meeting.setdefault(d["meeting"], []).append(d["full"])
    for m in MEETINGS:
        if m["title"] not in ctx.by_title:
            raise SystemExit(f"unknown meeting {m['title']}")
    for d in decisions.values():
        if d["meeting"] and d["meeting"] not in ctx.by_title:
            raise SystemExit(f"decision {d['full']} names unknown meeting {d['meeting']}")
    for m in MEETINGS:
        n = ctx.get(m["title"])
        rng = n.rng()
        date = m["title"][:10]
        n.frontmatter = [("date", date), ("type", "meeting"), ("tags", ["meeting", KIND_TAG[m["kind"]]])]
        if m["projects"]:
            n.frontmatter.append(("project", [link(p) for p in m["projects"]]))
        blocks = []
        if rng.random() < 0.75:
            blocks.append(f"# {m['title'][11:]} — {human(date, rng.choice([0, 1]))}")
        if m["kind"] == "one-on-one":
            blocks.append(ctx.expand(rng, "«1:1 with|Weekly 1:1,|Regular 1:1 with» {p}«.|, usual slot.|, 30 minutes.»", p=link(m["who"][0])))
        else:
            names = ", ".join(link(w) for w in m["who"])
            if rng.random() < 0.3:
                names += ", me"
            blocks.append(rng.choice(WHO_FORMS).format(names=names))
            intro = ctx.expand(rng, rng.choice(INTRO), wd=weekday(date), chair=link(m["who"][0]))
            if intro:
                blocks.append(intro)
        blocks.append(ctx.expand(rng, rng.choice(KIND_CONTEXT[m["kind"]])))
        if m.get("agenda"):
            blocks.append("## Agenda\n\n" + "\n".join(f"{i}. {a}" for i, a in enumerate(m["agenda"], 1)))
        if rng.random() < 0.8:
            blocks.append(f"## {rng.choice(NOTES_HEAD)}\n\n" + bullets(m["points"]))
        else:
            blocks.append(f"## {rng.choice(NOTES_HEAD)}\n\n" + " ".join(m["points"]))
        decs = by_meeting.get(m["title"], [])
        if decs:
            blocks.append("## Decisions\n\n" + rng.choice(DEC_FORMS).format(links=", ".join(link(d) for d in decs)))
        else:
            nd = rng.choice(NO_DEC)
            if nd:
                blocks.append("## Decisions\n\n" + nd)
        acts = [f"[ ] {link(who)} — {task}, by {human(due, 2)}" for who, task, due in m["actions"]]
        blocks.append(f"## {rng.choice(ACT_HEAD)}\n\n" + bullets(acts))
        if m.get("embed"):
            blocks.append("## Project timeline (embedded)\n\n![[Halyard#Timeline]]")
        closing = ctx.expand(rng, rng.choice(CLOSING))
        if closing:
            blocks.append(closing)
        n.body = sections(blocks)
    rg = READING_GROUP
    n = ctx.get(rg["title"])
    n.frontmatter = [("type", "meeting"), ("tags", ["meeting", "recurring"])]
    blocks = [f"# {rg['title']}", "**Regulars:** " + ", ".join(link(w) for w in rg["who"])]
    for head, body in rg["text"]:
        blocks.append(f"## {head}\n\n{body}" if head else body)
    n.body = sections(blocks)
