"""Decisions/: architecture and company decision records (ADRs). Thirteen topics were decided
more than once; the older record is marked superseded (frontmatter ``superseded_by``) and the
newer one says which record it replaces."""

from __future__ import annotations

from .common import bullets, human, link, sections

# key, number, title, date, meeting (or None), projects, deciders, supersedes (key or None)
DECISIONS = [
    dict(key="office-1", num=1, title="Three office days a week", date="2024-03-05", meeting="2024-03-05 Remote work policy discussion",
         projects=[], deciders=["Jonas Brandt", "Zoë van der Berg", "Mirela Okafor"],
         context="After two years of mostly remote work, new joiners told us they learned slowly and felt disconnected, and the Rotterdam office was empty most days. At the same time several engineers moved outside the Randstad during the pandemic and commute over an hour each way.",
         decision="Everyone based in Rotterdam works from the office three days a week: Tuesday, Wednesday and Thursday. Monday and Friday are free. Exceptions for people hired as remote are written into their contracts.",
         consequences="Office costs stay as they are. Meetings cluster on the three office days. People with long commutes are unhappy; we will revisit after a year based on a survey.",
         alternatives=["Fully remote with quarterly meetups.", "Two days, chosen per team."]),
    dict(key="region-1", num=2, title="Run production in eu-west-1", date="2024-04-16", meeting="2024-04-16 Cloud region review",
         projects=["Halyard"], deciders=["Ingrid Solberg", "Tomasz Wieczorek", "Mirela Okafor"],
         context="We are moving from a single virtual machine provider to a major cloud. Customers require data to stay in the EU. The team has the most experience with the Irish region, and it has the widest choice of managed services and instance types.",
         decision="Production runs in eu-west-1 (Ireland), with backups replicated to a second EU region. Staging runs in the same region to keep things simple.",
         consequences="Latency from Lisbon and Rotterdam is acceptable, 25–35 ms. Prices in Ireland are slightly higher for some instance types than in other EU regions, which we accept for now. All Terraform modules assume one region.",
         alternatives=["eu-central-1 (Frankfurt).", "Staying with the current provider."]),
    dict(key="terraform", num=3, title="All infrastructure as code in Terraform", date="2024-04-30", meeting=None,
         projects=[], deciders=["Ingrid Solberg"],
         context="During the cloud move, resources were being created by hand in the console by three different people, and nobody could say what existed or why. Two test databases ran for a month unnoticed.",
         decision="Every cloud resource is defined in [[Terraform]], reviewed in a pull request and applied from CI. Manual changes are allowed only during incidents and must be imported within a week.",
         consequences="Slower to try things out. In exchange we have a reviewable history of every change and can rebuild an environment from scratch. The cost attribution work later depended on the tags this made consistent.",
         alternatives=["Pulumi, which two engineers preferred.", "The cloud provider's own template language."]),
    dict(key="mobile-1", num=4, title="Build the driver app with React Native", date="2024-05-21", meeting="2024-05-21 Mobile framework choice",
         projects=["Mooring"], deciders=["Chen Wei", "Priya Raman", "Mirela Okafor"],
         context="Drivers need one app for routes, proof of delivery and trailer temperatures. We have no mobile specialists besides Chen, and three web developers who know React well. The app must run on Android and iOS.",
         decision="Build the first version of [[Mooring]] with [[React Native]], sharing validation code with the portal, and ship to Android first.",
         consequences="Fast first version with the people we have. We accept the risk of performance problems on very old phones and of depending on community libraries for background sync.",
         alternatives=["Native Android only, iOS later.", "Flutter, which nobody knew."]),
    dict(key="broker-1", num=5, title="Use RabbitMQ for telemetry ingestion", date="2024-06-11", meeting="2024-06-11 Message broker evaluation",
         projects=["Halyard"], deciders=["Tomasz Wieczorek", "Ingrid Solberg"],
         context="Halyard needs a broker between the ingestion gateway and the services that process readings. Current volume is about 1,500 readings per second. The team already runs [[RabbitMQ]] for job queues and knows it well.",
         decision="Telemetry goes through RabbitMQ, one queue per consumer service, with quorum queues for durability. We will revisit when volume passes 10,000 readings per second.",
         consequences="No new technology to operate. Replaying history is not possible once messages are acknowledged; we accept that for now and keep raw readings in the database.",
         alternatives=["Kafka, judged too much operational work for the current volume.", "A managed cloud queue."]),
    dict(key="vendor-1", num=6, title="Thermora as the logger vendor", date="2024-07-23", meeting="2024-07-23 Thermora vendor call",
         projects=["Halyard", "Lanyard"], deciders=["Gustavo Paiva", "Priya Raman", "Hélène Marchetti"],
         context="Halyard needs cellular temperature loggers for every trailer. We tested four models for six weeks. Price matters because we need about a thousand units in the first year.",
         decision="Buy loggers from [[Thermora]], starting with 500 units, at €74 each. Their calibration documentation is the best of the four and they are an hour away in Eindhoven.",
         consequences="Lowest unit cost. Firmware is theirs, so features depend on their roadmap. Battery performance in heat was not tested beyond 35 °C.",
         alternatives=["Coldlink, €15 more per unit.", "Two other vendors with weaker calibration paperwork."]),
    dict(key="store-1", num=7, title="Store telemetry in TimescaleDB", date="2024-08-20", meeting="2024-08-20 Telemetry storage review",
         projects=["Halyard"], deciders=["Tomasz Wieczorek", "Femi Adeyemi"],
         context="Readings currently go into a plain Postgres table that is already 400 GB and slow to query over long ranges. Charts in the portal need per-minute and per-hour aggregates.",
         decision="Use [[TimescaleDB]] on our managed Postgres: hypertables partitioned by day, native compression after seven days, continuous aggregates for minute and hour rollups.",
         consequences="The team keeps working in SQL and can join readings against shipments. We expect to outgrow a single node at some point, but not before 2026.",
         alternatives=["ClickHouse, new to the team.", "A managed time-series database service."]),
    dict(key="oncall-1", num=8, title="Weekly on-call rotation", date="2024-09-10", meeting="2024-09-10 On-call retro",
         projects=["Bosun"], deciders=["Ingrid Solberg", "Mirela Okafor"],
         context="On call has been informal: whoever knows the system gets called. Three people carry almost all pages, at any hour. One of them has said he will leave if it continues.",
         decision="A formal weekly rotation of six engineers in Rotterdam, Monday 10:00 to Monday 10:00, primary and secondary, with a paid allowance per week on call and time off after a night page.",
         consequences="Load is shared. Everyone on the rotation needs runbooks for services they did not build, which do not exist yet. Night pages remain a problem, since all six are in the same time zone.",
         alternatives=["Paying an external provider for first-line support.", "Daily rotation."]),
    dict(key="ortools", num=9, title="Use OR-Tools for route optimisation", date="2024-09-24", meeting=None,
         projects=["Spinnaker"], deciders=["Aino Järvinen", "Kwame Mensah"],
         context="Spinnaker needs a solver for vehicle routing with time windows and multi-compartment trailers. [[Aino Järvinen|Aino]] benchmarked three options on four weeks of real orders from the Lyon lanes. On those instances the open-source routing solver beat the hand-tuned heuristic dispatch had used in its spreadsheet by 11% on total cost, within a 60-second time budget.",
         decision="Build Spinnaker on [[OR-Tools]] with its routing library and guided local search.",
         consequences="No licence cost. We depend on a Google-maintained project; its API changes between major versions. Modelling driver breaks needs custom dimensions.",
         alternatives=["A commercial solver, roughly €30,000 a year.", "Writing our own metaheuristic."]),
    dict(key="retention-1", num=10, title="Keep raw telemetry for 24 months", date="2024-10-15", meeting=None,
         projects=["Halyard"], deciders=["Anouk Visser", "Tomasz Wieczorek"],
         context="We have no policy for how long logger readings are kept. Pharma customers must be able to show temperature records during audits, and their contracts mention the shelf life of products plus one year. Storage is cheap at today's volume.",
         decision="Keep raw per-minute readings for 24 months after the shipment ends. Aggregated per-hour data is kept for five years.",
         consequences="Covers every contract we have today. Storage grows linearly with the fleet. Deletion jobs must be written before the first data turns two years old.",
         alternatives=["Keep everything forever.", "Twelve months, which one contract did not allow."]),
    dict(key="rust", num=11, title="Write logger firmware in Rust", date="2024-10-29", meeting=None,
         projects=["Lanyard"], deciders=["Gustavo Paiva", "Mirela Okafor"],
         context="Lanyard will replace vendor firmware with our own. The module vendor supports C and has a mature Rust ecosystem through community crates. Gustavo has shipped C firmware for years and Rust on two hobby projects.",
         decision="Write the firmware in Rust, using the embedded async framework and the vendor's modem library through bindings.",
         consequences="Memory-safety bugs mostly disappear. Hiring is harder and the learning curve for anyone else is steep. Some vendor examples must be translated.",
         alternatives=["C with the vendor's SDK.", "Keep vendor firmware."]),
    dict(key="alert-1", num=12, title="Temperature alert after 10 minutes", date="2024-11-12", meeting="2024-11-12 Alert threshold workshop",
         projects=["Halyard"], deciders=["Priya Raman", "Tomasz Wieczorek", "Lars Eriksen"],
         context="Halyard alerts on every reading outside the product's band, so a door opening at delivery triggers an alert. Customers get dozens a day. We need a delay before an out-of-band reading becomes an alert.",
         decision="Raise a temperature alert when readings stay outside the band for 10 consecutive minutes, for every product class and every customer.",
         consequences="Most door-opening alerts disappear. Real excursions are reported up to ten minutes later than before. One rule for all customers keeps the configuration simple.",
         alternatives=["Five minutes.", "Customer-defined delays."]),
    dict(key="pricing-1", num=13, title="Price pharma lanes per pallet", date="2024-12-17", meeting="2024-12-17 Pricing review",
         projects=["Capstan"], deciders=["Hélène Marchetti", "Lars Eriksen", "Jonas Brandt"],
         context="Pharma pricing has been negotiated per customer, in four different structures. Margins vary from 4% to 31% and nobody can explain why. Sales wants one model to quote from.",
         decision="Quote pharma lanes per pallet, with a base rate per lane and surcharges for temperature band and for stops beyond the second.",
         consequences="Easy to quote and compare. Small, urgent shipments of one or two pallets become unprofitable. Billing must support per-pallet lines with surcharges.",
         alternatives=["Per shipment.", "Per kilometre."]),
    dict(key="bowline-1", num=14, title="Bowline scope - Dutch declarations only", date="2025-01-14", meeting="2025-01-14 Q1 2025 planning",
         projects=["Bowline"], deciders=["Sofía Castaño", "Yusuf Demir", "Mirela Okafor"],
         context="Bowline could automate declarations in all three countries where we file. Each national customs system has its own interface and our brokers differ per country. The team is two people.",
         decision="The first release of [[Bowline]] covers export and import declarations filed in the Netherlands only. Portuguese and Spanish filings stay manual with the local brokers.",
         consequences="Focus on the biggest volume, Rotterdam. The Iberian teams keep their manual process and its error rate for at least a year.",
         alternatives=["All three countries in one go.", "Spain first, where errors are most expensive."]),
    dict(key="mobile-2", num=15, title="Rewrite the driver app in Flutter", date="2025-01-21", meeting="2025-01-21 Mooring rewrite discussion",
         projects=["Mooring"], deciders=["Chen Wei", "Priya Raman", "Mirela Okafor"], supersedes="mobile-1",
         context="This replaces [[ADR-004 Build the driver app with React Native]]. After a year in production the first version crashes on about 3% of sessions, almost all on older Android phones used by subcontracted drivers, and its background sync library is no longer maintained. A two-week prototype of the photo flow in Flutter used half the memory.",
         decision="Rewrite [[Mooring]] in [[Flutter]], screen by screen, with the same backend API. The old app stays in the stores until all drivers have moved.",
         consequences="About five months of mobile work with no new features. The team must learn Dart. The native Bluetooth plugin for loggers has to be maintained by us.",
         alternatives=["Fix the React Native app incrementally.", "Native Android and iOS apps."]),
    dict(key="jib-1", num=16, title="Open the Lisbon warehouse on 1 September 2025", date="2025-01-28", meeting="2025-01-28 Lisbon warehouse kickoff",
         projects=["Jib"], deciders=["Rafael Azevedo", "Jonas Brandt", "Oskar Lindqvist"],
         context="The lease for the building at [[Alverca warehouse|Alverca]] is signed. Iberian volume is growing 40% a year and the third-party warehouse we rent from cannot give us more cold space. The refrigeration contractor quotes five months for the fit-out.",
         decision="Target opening of the Lisbon warehouse on 1 September 2025, before the autumn peak.",
         consequences="Refrigeration must be ordered in February. The rented space is extended to the end of September as a buffer. Recruiting for the warehouse team starts in May.",
         alternatives=["Open in January 2026, after the peak.", "Keep renting and expand the contract."]),
    dict(key="dbt", num=17, title="Use dbt for warehouse transformations", date="2025-02-11", meeting=None,
         projects=["Keel"], deciders=["Femi Adeyemi", "Dmitri Volkov"],
         context="Warehouse transformations are a folder of SQL scripts run in a fixed order by a shell script. There are no tests, and two dashboards compute revenue differently.",
         decision="All transformations move to [[dbt]] models with tests and documentation. Metric definitions live in one place.",
         consequences="A few weeks of migration. Analysts need to learn the conventions. The revenue discrepancy becomes visible, which is uncomfortable but good. Every model gets an owner, and finance marts get a second reviewer.",
         alternatives=["Keep the scripts and add tests.", "Transformations in Python."]),
    dict(key="vendor-2", num=18, title="Switch logger vendor to Coldlink", date="2025-02-25", meeting="2025-02-25 Sensor vendor switch",
         projects=["Halyard", "Lanyard"], deciders=["Gustavo Paiva", "Priya Raman", "Hélène Marchetti"], supersedes="vendor-1",
         context="Replaces [[ADR-006 Thermora as the logger vendor]]. Over the summer and autumn, units in hot trailers failed in the field, support took weeks to answer, and their firmware could not be replaced by ours. A field trial with [[Coldlink]] units on the Seville lanes ran without failures for eight weeks.",
         decision="Buy all new loggers from Coldlink under a three-year agreement, at €89 per unit, and replace the existing fleet by October 2025.",
         consequences="About €33,000 of hardware written off. [[Lanyard]] firmware is ported to the new hardware. Unit cost rises by €15, offset by fewer replacements.",
         alternatives=["Stay with the current vendor and add heat shields.", "Dual-source."]),
    dict(key="broker-2", num=19, title="Move telemetry ingestion to Kafka", date="2025-03-11", meeting="2025-03-11 Broker migration review",
         projects=["Halyard"], deciders=["Tomasz Wieczorek", "Ingrid Solberg", "Mirela Okafor"], supersedes="broker-1",
         context="This supersedes [[ADR-005 Use RabbitMQ for telemetry ingestion]]. Telemetry is at 9,000 readings per second and growing with every logger we deploy. Queues back up when a consumer slows down, memory alarms block the gateway, and we cannot replay readings after a consumer bug.",
         decision="Telemetry ingestion moves to [[Kafka]], self-hosted on Kubernetes, keyed by logger so that readings of one logger stay in order. RabbitMQ stays for job queues.",
         consequences="Replay and independent consumers become possible. We take on operating a Kafka cluster, which needs dedicated nodes and monitoring. The migration runs both paths in parallel for four weeks.",
         alternatives=["A managed Kafka service, about three times the cost.", "Scaling RabbitMQ with streams."]),
    dict(key="firmware-review", num=20, title="Two reviewers for firmware changes", date="2025-03-25", meeting=None,
         projects=["Lanyard"], deciders=["Gustavo Paiva", "Mirela Okafor"],
         context="The post-mortem of the March alarm incident found that a change to the buffer code was reviewed by one person in a hurry. Firmware mistakes reach every logger and are slow to fix because updates roll out in stages.",
         decision="Every change to logger firmware needs two approving reviews, one of them from someone who did not write any of the change, and must pass the hardware-in-the-loop tests.",
         consequences="Slower firmware changes; Gustavo needs a second reviewer, so [[Marta Kowalczyk]] and an external contractor are learning the code base.",
         alternatives=["Keep one reviewer but add more tests."]),
    dict(key="alert-2", num=21, title="Alert delays by product class", date="2025-04-08", meeting="2025-04-08 Alert threshold revisit",
         projects=["Halyard"], deciders=["Priya Raman", "Tomasz Wieczorek", "Lars Eriksen"], supersedes="alert-1",
         context="Replaces [[ADR-012 Temperature alert after 10 minutes]]. Pharma customers say ten minutes is too late for some biologics; fresh-food customers still get too many alerts at deliveries and one muted them entirely. One delay for everyone fits nobody.",
         decision="Alert delays depend on the product class: 4 minutes for pharma in the 2–8 °C band, 15 minutes for fresh food, 30 minutes for controlled-ambient goods. Customers can make a delay shorter but not longer.",
         consequences="More configuration and more to explain to customers. Pharma alerts arrive earlier; food alerts drop by about 70%.",
         alternatives=["Customer-defined delays with no default.", "Alerts on mean kinetic temperature."]),
    dict(key="dagster", num=22, title="Orchestrate data pipelines with Dagster", date="2025-05-20", meeting=None,
         projects=["Keel"], deciders=["Femi Adeyemi"],
         context="Our [[Airflow]] installation needs a major version upgrade. Lineage between raw tables and dashboards is unknown, backfills are manual, and tests of pipelines happen in production.",
         decision="Move all pipelines to [[Dagster]], modelling tables and dbt models as assets.",
         consequences="About seven weeks of migration. We lose some ready-made integrations and must write our own sensor for the broker's file drops. Both orchestrators run in parallel until every pipeline has moved, and the old one is switched off after two clean weeks.",
         alternatives=["Upgrade Airflow.", "A managed orchestration service."]),
    dict(key="ga-1", num=23, title="Halyard GA on 1 December 2025", date="2025-06-03", meeting="2025-06-03 Halyard steering",
         projects=["Halyard"], deciders=["Priya Raman", "Tomasz Wieczorek", "Jonas Brandt"],
         context="Halyard has been in beta with seven customers for nine months. Sales needs a date for general availability to include live tracking in renewals and tenders.",
         decision="General availability of [[Halyard]] for all customers on 1 December 2025, with the portal, alerting and the shipment temperature record included in the standard price.",
         consequences="Kafka migration and logger replacement must finish by October. Sales can commit the date in tenders.",
         alternatives=["GA in spring 2026.", "GA for pharma only."]),
    dict(key="oncall-2", num=24, title="Follow-the-sun on-call", date="2025-06-24", meeting="2025-06-24 On-call follow-the-sun",
         projects=["Bosun"], deciders=["Ingrid Solberg", "Mirela Okafor", "Rafael Azevedo"], supersedes="oncall-1",
         context="Supersedes [[ADR-008 Weekly on-call rotation]]. With the Lisbon team grown to four engineers, we can split the day. Night pages still fall on the same six people, and two of them have asked to leave the rotation.",
         decision="On call is split between Rotterdam and Lisbon: Rotterdam covers 08:00–20:00 CET, Lisbon covers 20:00–08:00 CET on a paid night-shift arrangement for volunteers, with a weekly handover on Mondays at 10:00. Rotations are one week long.",
         consequences="Fewer night pages for most people; volunteers in Lisbon are paid a night allowance. Handover quality becomes critical.",
         alternatives=["External night-time first line.", "Keep weekly rotation and reduce alerts further."]),
    dict(key="store-2", num=25, title="Move telemetry storage to ClickHouse", date="2025-07-15", meeting="2025-07-15 Telemetry storage revisit",
         projects=["Halyard", "Ballast"], deciders=["Tomasz Wieczorek", "Femi Adeyemi", "Ingrid Solberg"], supersedes="store-1",
         context="This replaces [[ADR-007 Store telemetry in TimescaleDB]]. The database now holds 14 TB, compression jobs compete with ingest at the morning peak, long-range charts take twenty seconds, and storage is the largest line on the cloud bill.",
         decision="Telemetry moves to a managed [[ClickHouse]] cluster, shared with the analytics warehouse. Writes are batched every two seconds from the Kafka consumer.",
         consequences="Storage drops to about a seventh. Joins with shipment data happen in the warehouse, not in the transactional database. The old database is kept read-only for three months.",
         alternatives=["Scale TimescaleDB with multi-node.", "Object storage with a query engine."]),
    dict(key="pricing-2", num=26, title="Price per shipment with a temperature SLA", date="2025-08-19", meeting="2025-08-19 Pricing review",
         projects=["Capstan"], deciders=["Hélène Marchetti", "Lars Eriksen", "Jonas Brandt"], supersedes="pricing-1",
         context="Replaces [[ADR-013 Price pharma lanes per pallet]]. Per-pallet pricing made small urgent shipments unprofitable, which are exactly what biotech customers send. Customers also ask what they get if the temperature is not kept.",
         decision="Quote per shipment, with a price by lane, temperature band and size class (1–2, 3–10, 11–33 pallets), and a temperature service level: if an excursion is our fault, the customer gets 50% of the shipment price back.",
         consequences="Billing must support size classes and SLA credits by November. Margins on small shipments improve; large shipments get slightly cheaper.",
         alternatives=["Per pallet with a minimum charge.", "Subscription pricing."]),
    dict(key="region-2", num=27, title="Move production to eu-central-1", date="2025-09-16", meeting="2025-09-16 Cloud region move",
         projects=["Ballast", "Halyard"], deciders=["Ingrid Solberg", "Tomasz Wieczorek", "Hélène Marchetti"], supersedes="region-1",
         context="Supersedes [[ADR-002 Run production in eu-west-1]]. Two large pharma customers in Germany require hosting in Germany in their new contracts, and our managed warehouse and Kafka storage are cheaper in Frankfurt for our instance mix.",
         decision="Production moves to eu-central-1 (Frankfurt) by the end of November 2025, with backups in a second EU region. Staging moves first.",
         consequences="Six weeks of migration work, one planned maintenance window. Latency from Lisbon rises by about 10 ms. Saves roughly €2,500 a month.",
         alternatives=["Stay in Ireland and add a German region for two customers."]),
    dict(key="jib-2", num=28, title="Lisbon warehouse opening moved to 4 May 2026", date="2025-09-23", meeting="2025-09-23 Jib status review",
         projects=["Jib"], deciders=["Rafael Azevedo", "Jonas Brandt", "Oskar Lindqvist"], supersedes="jib-1",
         context="This replaces [[ADR-016 Open the Lisbon warehouse on 1 September 2025]]. The refrigeration fit-out finished in August, but the municipality of Vila Franca de Xira has not issued the operating licence: the fire-safety plan had to be redone for the new insulation panels. Opening during the winter peak is too risky.",
         decision="The warehouse opens on 4 May 2026. The rented space at the third-party warehouse is extended to the end of May 2026.",
         consequences="About €140,000 extra rent and a delayed return on the investment. The warehouse team starts in March to train in the empty building.",
         alternatives=["Open in January if the licence arrives, during the peak."]),
    dict(key="office-2", num=29, title="Two anchor days in the office", date="2025-10-07", meeting="2025-10-07 Remote work policy revisit",
         projects=[], deciders=["Jonas Brandt", "Zoë van der Berg", "Mirela Okafor"], supersedes="office-1",
         context="Replaces [[ADR-001 Three office days a week]]. The survey a year later showed Wednesday attendance under 40%, the maker-afternoon rule made Wednesday the least social day anyway, and two strong candidates declined offers over the policy.",
         decision="Two anchor days a week, Tuesday and Thursday, when everyone based near an office comes in. The rest is up to teams. Lisbon follows the same days.",
         consequences="Fewer desks needed; we give up a meeting room in the next lease negotiation. Teams must organise their own in-person time beyond the anchor days.",
         alternatives=["Keep three days.", "No fixed days at all."]),
    dict(key="keycloak", num=30, title="Keycloak for single sign-on", date="2025-10-14", meeting=None,
         projects=["Cleat", "Tiller"], deciders=["Nadia Haddad", "Ingrid Solberg"],
         context="[[Cleat]] needs an identity broker for staff and for customers of the portal. Customers' data must stay in the EU, and several pharma customers want to log in with their own identity provider.",
         decision="Self-host [[Keycloak]] as the identity broker for staff and customer single sign-on.",
         consequences="No per-user licence costs. We operate it ourselves, including upgrades and backups, and we carry the risk if it is down: nobody can log in to anything. It gets two replicas, an SLO and a runbook before it goes live.",
         alternatives=["A hosted identity service priced per monthly user."]),
    dict(key="ga-2", num=31, title="Halyard GA moved to 2 March 2026", date="2025-10-21", meeting="2025-10-21 Halyard steering",
         projects=["Halyard"], deciders=["Priya Raman", "Tomasz Wieczorek", "Jonas Brandt"], supersedes="ga-1",
         context="This supersedes [[ADR-023 Halyard GA on 1 December 2025]]. The region move takes production until the end of November, and the last Thermora units were only replaced in October. Releasing to every customer in the same week as a region move is not sensible.",
         decision="General availability moves to 2 March 2026. Beta customers keep full access in the meantime.",
         consequences="Sales must update two tenders that named December. The extra time goes to alert tuning and load testing.",
         alternatives=["GA in December without the region move."]),
    dict(key="bowline-2", num=32, title="Extend Bowline to Portugal and Spain", date="2025-11-18", meeting="2025-11-18 Bowline expansion",
         projects=["Bowline"], deciders=["Sofía Castaño", "Yusuf Demir", "Rafael Azevedo"], supersedes="bowline-1",
         context="Replaces [[ADR-014 Bowline scope - Dutch declarations only]]. Dutch filings are stable, the Sines lane adds Portuguese import declarations every week, and manual Iberian filings are now the largest source of customs errors.",
         decision="Bowline will file Portuguese declarations by March 2026 and Spanish ones by June 2026, through one Iberian broker with an API instead of the current two.",
         consequences="A broker change in Spain and a second integration. Yusuf moves back to Bowline part-time after the billing cut-over.",
         alternatives=["Portugal only.", "Keep Iberia manual and hire a second customs specialist."]),
    dict(key="ga-3", num=33, title="Halyard GA moved to 13 April 2026", date="2026-01-20", meeting="2026-01-20 Halyard steering",
         projects=["Halyard"], deciders=["Priya Raman", "Tomasz Wieczorek", "Jonas Brandt"], supersedes="ga-2",
         context="Replaces [[ADR-031 Halyard GA moved to 2 March 2026]]. Load tests at three times current traffic found that the alert evaluator falls behind during the morning reconnect storm. Two pharma customers asked for single sign-on before they roll Halyard out to their quality teams.",
         decision="General availability on 13 April 2026, pharma customers first, food customers two weeks later. Single sign-on for the portal is part of GA.",
         consequences="Third slip; credibility with sales is low and the date must hold. Capacity work on the alert evaluator gets priority over new features.",
         alternatives=["Keep March without single sign-on."]),
    dict(key="retention-2", num=34, title="Keep raw telemetry for 13 months", date="2026-01-27", meeting="2026-01-27 Data retention review",
         projects=["Halyard"], deciders=["Anouk Visser", "Tomasz Wieczorek", "Hélène Marchetti"], supersedes="retention-1",
         context="This replaces [[ADR-010 Keep raw telemetry for 24 months]]. With 1,900 loggers, raw per-minute readings are most of our storage, and a review of all contracts showed that none requires raw readings beyond a year. Customers need the shipment temperature record, which is stored separately and kept for six years.",
         decision="Keep raw per-minute readings for 13 months after the shipment ends; per-hour rollups for five years; the shipment temperature record for six years.",
         consequences="Storage roughly halves by mid-2026. Deletion jobs must be verified by Anouk before the first run in March.",
         alternatives=["18 months as a compromise."]),
]

STATUS_FORMS_OLD = [
    "**Status:** superseded by {new} ({date})",
    "> [!warning] Superseded\n> Replaced by {new} on {date}.",
    "**Status:** superseded",
    "",
]
CTX_HEAD = ["Context", "Background", "Problem"]
CON_HEAD = ["Consequences", "Impact", "What this means"]
ALT_HEAD = ["Alternatives considered", "Options we rejected", "Other options"]


def register(ctx):
    by_key = {d["key"]: d for d in DECISIONS}
    for d in DECISIONS:
        d["full"] = f"ADR-{d['num']:03d} {d['title']}"
    for d in DECISIONS:
        if d.get("supersedes"):
            old = by_key[d["supersedes"]]
            old["superseded_by"] = d["full"]
            d["supersedes_full"] = old["full"]
    nums = sorted(d["num"] for d in DECISIONS)
    assert nums == list(range(1, len(DECISIONS) + 1))
    dates = [d["date"] for d in sorted(DECISIONS, key=lambda d: d["num"])]
    assert dates == sorted(dates), "ADR numbers must follow dates"
    dbp: dict = {}
    for d in DECISIONS:
        n = ctx.add("Decisions", d["full"], "decision")
        n.data = d
        n.superseded = bool(d.get("superseded_by"))
        for p in d["projects"]:
            dbp.setdefault(p, []).append(d["full"])
    ctx.data["decisions_by_project"] = dbp
    ctx.data["decisions"] = by_key


def write(ctx):
    for d in DECISIONS:
        n = ctx.get(d["full"])
        rng = n.rng()
        fm = [("date", d["date"]), ("status", "superseded" if d.get("superseded_by") else "accepted"),
              ("deciders", [link(x) for x in d["deciders"]])]
        if d.get("supersedes_full"):
            fm.append(("supersedes", link(d["supersedes_full"])))
        if d.get("superseded_by"):
            fm.append(("superseded_by", link(d["superseded_by"])))
        fm.append(("tags", ["decision", "adr"]))
        n.frontmatter = fm
        blocks = [f"# {d['full']}"]
        if d.get("superseded_by"):
            new = ctx.get(d["superseded_by"]).data
            form = rng.choice(STATUS_FORMS_OLD)
            if form:
                blocks.append(form.format(new=link(new["full"]), date=human(new["date"])))
        else:
            blocks.append(rng.choice(["**Status:** accepted", "**Status:** accepted, current", "Status: accepted."]))
        meta = [f"**Date:** {human(d['date'], rng.choice([0, 1]))}"]
        if d["meeting"]:
            meta.append(rng.choice(["**Decided in:** ", "**Meeting:** ", "**Source:** "]) + link(d["meeting"]))
        if d["projects"] and rng.random() < 0.7:
            meta.append("**Projects:** " + ", ".join(link(p) for p in d["projects"]))
        blocks.append("  \n".join(meta))
        blocks.append(f"## {rng.choice(CTX_HEAD)}\n\n{d['context']}")
        blocks.append(f"## Decision\n\n{d['decision']}")
        blocks.append(f"## {rng.choice(CON_HEAD)}\n\n{d['consequences']}")
        if d.get("alternatives"):
            blocks.append(f"## {rng.choice(ALT_HEAD)}\n\n" + bullets(d["alternatives"]))
        n.body = sections(blocks)
