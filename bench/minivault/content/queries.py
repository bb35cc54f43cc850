"""Labelled queries, built from the same tables as the notes.

Every label names notes by title (resolved to a vault path by the generator, which fails on a
typo). Entity queries about people, projects, tools, companies and places are partly phrased by
seeded templates; everything else is hand-written the way a user would type it.

Query types (see bench/README.md for what makes each one hard):
  entity, theme, bridge, compare, temporal, navigational, paraphrase
"""

from __future__ import annotations

import random
import re

_LINK = re.compile(r"\[\[([^\]\|#]*)")

SEED = "brain-minivault-v1|queries"

# ---------------------------------------------------------------------------------------------
# entity: a name (or alias, or an accent-stripped spelling) -> that note
# (title, kind, fixed query or None for a templated one, partial titles)
# ---------------------------------------------------------------------------------------------

ENTITY_TEMPLATES = {
    "person": ["{title}", "who is {first}", "{title} role", "what does {first} work on", "who's {title}?"],
    "project": ["project {title}", "{title} project", "what is {title}", "{title} status"],
    "tool": ["{title}", "our {title} setup", "how do we use {title}"],
    "org": ["{title}", "what do we know about {title}", "{title} contact person"],
    "place": ["{title}", "the {title}"],
}

ENTITY = [
    ("Mirela Okafor", "person", "Mirela Okafor", []),
    ("Halyard", "project", "project Halyard", []),
    ("Kwame Mensah", "person", None, []),
    ("Sofía Castaño", "person", "Sofia Castano", []),
    ("Dmitri Volkov", "person", "Дмитрий Волков", []),
    ("Thermora", "org", None, []),
    ("Bowline", "project", None, []),
    ("Aino Järvinen", "person", "Aino Jarvinen", []),
    ("Ruairí Ó Briain", "person", "Ruairí Ó Briain", []),
    ("Tomasz Wieczorek", "person", "Tomek", []),
    ("Coldlink", "org", None, []),
    ("Keycloak", "tool", None, ["Cleat"]),
    ("Farmanova", "org", None, []),
    ("Alverca warehouse", "place", "Alverca warehouse", ["Jib"]),
    ("Hannah Pohl", "person", None, []),
    ("Spinnaker", "project", None, []),
    ("Dijkstra Forwarding", "org", None, ["Antwerp cross-dock"]),
    ("Mateus Ribeiro", "person", None, []),
    ("Lanyard", "project", None, []),
    ("Elif Yıldız", "person", "Elif Yildiz", []),
    ("Maasvlakte depot", "place", None, []),
    ("Currach Ventures", "org", None, ["Ruairí Ó Briain"]),
    ("Zoë van der Berg", "person", "who's Zoe", []),
    ("ClickHouse", "tool", None, []),
    ("Brackwater", "hub", "Brackwater", ["Home"]),
    ("Nadia Haddad", "person", None, []),
    ("Sextant", "project", None, []),
    ("Lars Eriksen", "person", "Lars from sales", []),
    ("OR-Tools", "tool", None, ["Spinnaker"]),
    ("Gustavo Paiva", "person", None, []),
    ("Jib", "project", "Project Jib", []),
    ("Port of Sines", "place", None, []),
]

# ---------------------------------------------------------------------------------------------
# theme: a topic spread over several notes -> 2-5 notes that each substantively cover it;
# optional partial: notes that touch the topic but are not central to it
# ---------------------------------------------------------------------------------------------

THEME = [
    ("what do we know about cold-chain failures and temperature incidents",
     ["2025-03-18 Reefer alarm post-mortem", "2025-06-10 Verdelux escalation", "Temperature excursion", "Thermora"],
     ["Pre-cooling", "Cold chain"]),
    ("everything about customs paperwork and border filings",
     ["Bowline", "EU customs declaration", "T1 transit document", "Sofía Castaño", "2025-11-18 Bowline expansion"],
     ["ADR-014 Bowline scope - Dutch declarations only", "ADR-032 Extend Bowline to Portugal and Spain", "Incoterms"]),
    ("how is on-call organised and how do we keep pages down",
     ["Bosun", "ADR-024 Follow-the-sun on-call", "Alert fatigue", "SLOs and error budgets"],
     ["2025-06-24 On-call follow-the-sun", "2024-09-10 On-call retro", "Ingrid Solberg"]),
    ("hiring and onboarding new engineers",
     ["2025-03-04 Hiring plan 2025", "Onboarding checklist for engineers", "Interview questions for SRE candidates", "Zoë van der Berg"]),
    ("how did we bring the cloud bill down",
     ["Ballast", "ADR-025 Move telemetry storage to ClickHouse", "ADR-027 Move production to eu-central-1", "2025-07-15 Telemetry storage revisit"],
     ["2025-09-16 Cloud region move", "Terraform", "Ingrid Solberg"]),
    ("pharma compliance and GDP audits",
     ["Gaff", "Good Distribution Practice", "2025-11-04 Farmanova audit debrief", "Anouk Visser", "Temperature mapping"],
     ["Farmanova", "BioCura Labs", "Lars Eriksen"]),
    ("how is the expansion into Portugal going",
     ["Jib", "Lisbon office", "Alverca warehouse", "Rafael Azevedo", "2025-09-23 Jib status review"],
     ["ADR-028 Lisbon warehouse opening moved to 4 May 2026", "Transportes Almeida"]),
    ("route optimisation work",
     ["Spinnaker", "Vehicle routing problem", "Time windows", "OR-Tools", "ADR-009 Use OR-Tools for route optimisation"],
     ["Aino Järvinen"]),
    ("what do I have on our sensor hardware and logger vendors",
     ["Lanyard", "Thermora", "Coldlink", "Gustavo Paiva", "2025-02-25 Sensor vendor switch"],
     ["ADR-018 Switch logger vendor to Coldlink", "ADR-006 Thermora as the logger vendor", "ADR-011 Write logger firmware in Rust", "Questions for the Coldlink visit"]),
    ("data platform and the analytics warehouse",
     ["Keel", "dbt", "Dagster", "Change data capture", "Fathom"],
     ["Femi Adeyemi", "ClickHouse", "Airflow", "ADR-017 Use dbt for warehouse transformations", "ADR-022 Orchestrate data pipelines with Dagster"]),
    ("avoiding duplicate processing: exactly-once, dedup and retries that are safe",
     ["Exactly-once delivery", "Idempotency keys", "Outbox pattern", "Article - Stripe-like idempotency keys in Postgres"],
     ["Dead letter queue", "Capstan", "Enterprise Integration Patterns"]),
    ("my bread baking notes",
     ["Sourdough", "Focaccia"]),
    ("trips in Spain and Portugal",
     ["Galicia trip 2024", "Porto weekend 2025"]),
    ("bottlenecks and systems thinking",
     ["The Goal", "Thinking in Systems", "Bullwhip effect", "The Phoenix Project"]),
    ("notes on replication and consensus in distributed databases",
     ["Raft paper", "Dynamo paper", "Vector clocks", "CRDT"],
     ["CRDT paper", "Designing Data-Intensive Applications", "Consistent hashing"]),
    ("sport and staying fit",
     ["Running plan", "Bouldering log", "Sailing"]),
    ("security incidents and access control",
     ["Cleat", "Nadia Haddad", "2025-12-09 Phishing incident review", "Keycloak"],
     ["ADR-030 Keycloak for single sign-on"]),
    ("how has our pricing for pharma customers evolved",
     ["ADR-013 Price pharma lanes per pallet", "ADR-026 Price per shipment with a temperature SLA", "2024-12-17 Pricing review", "2025-08-19 Pricing review"],
     ["Capstan", "Hélène Marchetti"]),
    ("the drivers' mobile app",
     ["Mooring", "Flutter", "React Native", "Chen Wei", "2025-01-21 Mooring rewrite discussion"],
     ["ADR-004 Build the driver app with React Native", "ADR-015 Rewrite the driver app in Flutter", "Beatriz Lobo"]),
    ("history of our remote work policy",
     ["ADR-001 Three office days a week", "ADR-029 Two anchor days in the office", "2024-03-05 Remote work policy discussion", "2025-10-07 Remote work policy revisit"]),
    ("books on running reliable software in production",
     ["Site Reliability Engineering", "Release It!", "Accelerate"],
     ["The Phoenix Project"]),
    ("what do I know about caching",
     ["Cache invalidation", "Redis", "Consistent hashing"]),
    ("history of container shipping",
     ["The Box", "Ninety Percent of Everything", "Reefer container"]),
    ("investors, the board and fundraising",
     ["Currach Ventures", "Ruairí Ó Briain", "2026-02-10 Board meeting", "2024-02-20 Board meeting"],
     ["2025-02-18 Board meeting", "Brackwater", "Hélène Marchetti"]),
    ("how to structure engineering teams",
     ["Team Topologies", "An Elegant Puzzle", "2025-09-02 Engineering reorg", "The Mythical Man-Month"]),
    ("message brokers and streaming",
     ["Kafka", "RabbitMQ", "Consumer lag", "Dead letter queue", "Backpressure"],
     ["ADR-005 Use RabbitMQ for telemetry ingestion", "ADR-019 Move telemetry ingestion to Kafka", "Kafka paper", "Enterprise Integration Patterns", "Load shedding"]),
    ("how we set temperature alert thresholds",
     ["ADR-012 Temperature alert after 10 minutes", "ADR-021 Alert delays by product class", "2024-11-12 Alert threshold workshop", "2025-04-08 Alert threshold revisit", "Talk idea - alert thresholds"],
     ["Temperature excursion", "Alert fatigue", "Paper - Stability budgets in pharmaceutical transport"]),
    ("shipping frozen clinical samples",
     ["Dry ice shipping", "BioCura Labs"],
     ["2025-11-03"]),
]

# ---------------------------------------------------------------------------------------------
# bridge: the query's distinctive words occur in note A (via) only; the answer is in note B,
# which A links to (or which links to A) and which contains none of those words.
# (query, B, A, distinctive terms)
# ---------------------------------------------------------------------------------------------

BRIDGE = [
    ("who recommended the novel where Herbie slows down the whole scout hike?", "Kwame Mensah", "The Goal", ["Herbie", "scout"]),
    ("who told me to read the book about Malcom McLean and the Ideal-X?", "Ruairí Ó Briain", "The Box", ["McLean", "Ideal-X"]),
    ("how many km did I walk on the trip where I learned to cook octopus with pimentón?", "Galicia trip 2024", "Pulpo a la gallega", ["octopus", "pimentón"]),
    ("who mentors the new SRE who used to captain ferries across the Tagus?", "Ingrid Solberg", "Mateus Ribeiro", ["ferries", "Tagus"]),
    ("the silent alarms at the Maasvlakte depot — which project had the bug, and what language is it written in?", "Lanyard", "2025-03-18 Reefer alarm post-mortem", ["silent", "Maasvlakte"]),
    ("what do the loggers from the vendor that replaced the one with swollen batteries in Seville cost?", "Coldlink", "Thermora", ["swollen", "Seville"]),
    ("who explained the Arrhenius-weighted temperature average to me, and when is she free for a call?", "Hannah Pohl", "Mean kinetic temperature", ["Arrhenius"]),
    ("who is in charge of the project that ended our faxing of invoices, and which city is she from?", "Sofía Castaño", "Bowline", ["fax"]),
    ("who drafted the agenda for the offsite where we all cooked cataplana, and what did she do before?", "Zoë van der Berg", "2024-10-08 Lisbon offsite", ["cataplana"]),
    ("who sized the cluster with 36 partitions per topic and tiered storage, and where did he work before?", "Tomasz Wieczorek", "Kafka", ["partitions", "tiered"]),
    ("whose copy is the book about the voyage on the Maersk Kendal, and what's his job?", "Oskar Lindqvist", "Ninety Percent of Everything", ["Maersk Kendal"]),
    ("where do the rolls I shot under the midnight sun in Reine get developed, and what does it cost?", "Film photography", "Lofoten trip 2025", ["midnight sun", "Reine"]),
    ("who wrote the outbox relay that polls every 500 ms, and what does he own?", "Yusuf Demir", "Outbox pattern", ["outbox", "relay", "500 ms"]),
    ("how many pallets a month is the contract with the client whose avocados arrived at 14 °C?", "Verdelux", "2025-06-10 Verdelux escalation", ["avocados", "14 °C"]),
    ("where did the person leading the pallet demand forecasting work before joining us?", "Dmitri Volkov", "Sextant", ["forecast", "pallet demand"]),
    ("who ran the benchmark where the solver beat the hand-tuned heuristic by 11%, and what was her PhD about?", "Aino Järvinen", "ADR-009 Use OR-Tools for route optimisation", ["hand-tuned", "11%"]),
    ("who is the main contact at the company running the cross-dock on the Scheldt with 22 dock doors?", "Dijkstra Forwarding", "Antwerp cross-dock", ["Scheldt", "dock doors"]),
    ("who maintains the dwell-time heatmap dashboard, and which evening is he never available?", "Femi Adeyemi", "Grafana", ["heatmap", "dwell"]),
    ("when and where does the group that read the book with the boar on the cover meet?", "Engineering reading group", "Designing Data-Intensive Applications", ["boar"]),
    ("who gave me Gertrude the starter, and what does she do at work?", "Beatriz Lobo", "Sourdough", ["Gertrude"]),
    ("who do I talk to at the client that asked about a shipment to Tenerife?", "BioCura Labs", "2025-11-03", ["Tenerife"]),
    ("what's the memory alert threshold on the store that holds the geofence cache sharded with a hash ring?", "Redis", "Consistent hashing", ["geofence", "hash ring"]),
    ("how many runbooks does the project have that took over the runbooks written when a retailer's promotion tripled our bookings?", "Bosun", "2024-12-03 Black Friday spike post-mortem", ["promotion", "tripled"]),
    ("who does the mobile engineer who came from ride-hailing in Shenzhen report to, and what's her rule about meetings?", "Mirela Okafor", "Chen Wei", ["Shenzhen", "ride-hailing"]),
    ("how long does the soup I started making after staying by the Philosopher's Path need on the stove?", "Ramen broth", "Kyoto trip 2025", ["Philosopher's Path"]),
    ("who is the frontend lead on the portal where customers download signed PDF certificates, and where did she study?", "Elif Yıldız", "Tiller", ["PDF", "certificate"]),
    ("who coordinates dispatch for our weekly lane out of Sines, and which football club does he support?", "Rafael Azevedo", "Port of Sines", ["Sines"]),
    ("which app warns drivers at 4h15 of driving, and how many drivers use it each week?", "Mooring", "Tachograph rules", ["4h15"]),
    ("what did the reorg proposal inspired by the book on cognitive load and four team types actually propose?", "2025-09-02 Engineering reorg", "Team Topologies", ["cognitive load", "four team types"]),
    ("who do I go bouldering with at Blok 010, and what does she do at work?", "Marta Kowalczyk", "Bouldering log", ["bouldering", "Blok 010"]),
]

# ---------------------------------------------------------------------------------------------
# compare: "X vs Y" -> both notes
# ---------------------------------------------------------------------------------------------

COMPARE = [
    ("Kafka vs RabbitMQ", ["Kafka", "RabbitMQ"]),
    ("TimescaleDB or ClickHouse for telemetry, what's the difference for us?", ["TimescaleDB", "ClickHouse"]),
    ("Flutter vs React Native for the driver app", ["Flutter", "React Native"]),
    ("Thermora vs Coldlink loggers", ["Thermora", "Coldlink"]),
    ("Airflow versus Dagster", ["Airflow", "Dagster"]),
    ("difference between Halyard and Spinnaker", ["Halyard", "Spinnaker"]),
    ("Rotterdam office vs Lisbon office", ["Rotterdam HQ", "Lisbon office"]),
    ("how does the Maasvlakte depot compare to the Antwerp cross-dock", ["Maasvlakte depot", "Antwerp cross-dock"]),
    ("event sourcing vs the outbox pattern", ["Event sourcing", "Outbox pattern"]),
    ("rate limiting vs circuit breakers", ["Rate limiting", "Circuit breaker"]),
    ("blue-green deploys or feature flags?", ["Blue-green deployment", "Feature flags"]),
    ("T1 transit document vs a normal customs declaration", ["T1 transit document", "EU customs declaration"]),
    ("The Goal vs The Phoenix Project", ["The Goal", "The Phoenix Project"]),
    ("Farmanova vs BioCura as customers", ["Farmanova", "BioCura Labs"]),
    ("compare Verdelux and Nordhavn Seafood", ["Verdelux", "Nordhavn Seafood"]),
    ("sourdough vs focaccia hydration", ["Sourdough", "Focaccia"]),
    ("Galicia trip or Porto weekend, which was cheaper?", ["Galicia trip 2024", "Porto weekend 2025"]),
    ("Lofoten vs Kyoto trip cost", ["Lofoten trip 2025", "Kyoto trip 2025"]),
    ("exactly-once delivery vs idempotency keys", ["Exactly-once delivery", "Idempotency keys"]),
    ("temperature excursion vs mean kinetic temperature", ["Temperature excursion", "Mean kinetic temperature"]),
    ("Raft vs Dynamo", ["Raft paper", "Dynamo paper"]),
    ("dead letter queue vs retries with backoff", ["Dead letter queue", "Retries and backoff"]),
    ("Q3 2024 planning vs Q3 2025 planning", ["2024-07-02 Q3 2024 planning", "2025-07-08 Q3 2025 planning"]),
    ("Port of Sines compared with Valencia", ["Port of Sines", "Port of Valencia"]),
    ("Ingrid vs Tomasz, who does what on the platform side", ["Ingrid Solberg", "Tomasz Wieczorek"]),
    ("Accelerate vs the SRE book", ["Accelerate", "Site Reliability Engineering"]),
    ("bouldering vs running", ["Bouldering log", "Running plan"]),
    ("Keel vs Fathom", ["Keel", "Fathom"]),
    ("CRDTs vs vector clocks", ["CRDT", "Vector clocks"]),
]

# ---------------------------------------------------------------------------------------------
# temporal: the current answer. Relevant = the newest (never superseded) record; partial = notes
# that restate the current state (the meeting where it was decided, the tool it chose). The
# superseded records on the same topic are in neither list.
# (query, relevant title, partial titles)
# ---------------------------------------------------------------------------------------------

TEMPORAL = [
    ("when is Halyard going GA now?", "ADR-033 Halyard GA moved to 13 April 2026", ["2026-01-20 Halyard steering"]),
    ("latest Halyard general availability date", "ADR-033 Halyard GA moved to 13 April 2026", ["2026-01-20 Halyard steering"]),
    ("what did we decide in January 2026 about the Halyard launch?", "ADR-033 Halyard GA moved to 13 April 2026", ["2026-01-20 Halyard steering"]),
    ("which message broker do we use for telemetry now?", "ADR-019 Move telemetry ingestion to Kafka", ["2025-03-11 Broker migration review", "Kafka", "Halyard"]),
    ("what did we decide in March 2025 about the telemetry broker?", "ADR-019 Move telemetry ingestion to Kafka", ["2025-03-11 Broker migration review"]),
    ("current database for logger telemetry", "ADR-025 Move telemetry storage to ClickHouse", ["2025-07-15 Telemetry storage revisit", "ClickHouse", "Halyard"]),
    ("where are temperature readings stored these days?", "ADR-025 Move telemetry storage to ClickHouse", ["2025-07-15 Telemetry storage revisit", "ClickHouse", "Halyard"]),
    ("what framework is the driver app built with now?", "ADR-015 Rewrite the driver app in Flutter", ["2025-01-21 Mooring rewrite discussion", "Flutter", "Mooring"]),
    ("when does the Lisbon warehouse open?", "ADR-028 Lisbon warehouse opening moved to 4 May 2026", ["2025-09-23 Jib status review"]),
    ("latest opening date for the Alverca warehouse", "ADR-028 Lisbon warehouse opening moved to 4 May 2026", ["2025-09-23 Jib status review"]),
    ("how does the on-call rotation work now?", "ADR-024 Follow-the-sun on-call", ["2025-06-24 On-call follow-the-sun"]),
    ("what did we decide in June 2025 about on-call?", "ADR-024 Follow-the-sun on-call", ["2025-06-24 On-call follow-the-sun"]),
    ("who is our current logger vendor?", "ADR-018 Switch logger vendor to Coldlink", ["2025-02-25 Sensor vendor switch", "Coldlink", "Thermora"]),
    ("are we still buying Thermora loggers?", "ADR-018 Switch logger vendor to Coldlink", ["2025-02-25 Sensor vendor switch", "Coldlink", "Thermora"]),
    ("which AWS region is production in now?", "ADR-027 Move production to eu-central-1", ["2025-09-16 Cloud region move", "Ballast"]),
    ("current pricing model for pharma shipments", "ADR-026 Price per shipment with a temperature SLA", ["2025-08-19 Pricing review"]),
    ("what did we decide in August 2025 about pricing?", "ADR-026 Price per shipment with a temperature SLA", ["2025-08-19 Pricing review"]),
    ("how many days a week do we have to be in the office now?", "ADR-029 Two anchor days in the office", ["2025-10-07 Remote work policy revisit"]),
    ("latest remote work policy", "ADR-029 Two anchor days in the office", ["2025-10-07 Remote work policy revisit"]),
    ("is Bowline still Dutch-only or does it do Spain now?", "ADR-032 Extend Bowline to Portugal and Spain", ["2025-11-18 Bowline expansion", "Bowline"]),
    ("latest decision on which countries Bowline files customs declarations for", "ADR-032 Extend Bowline to Portugal and Spain", ["2025-11-18 Bowline expansion"]),
    ("what's the current alert delay for pharma loads?", "ADR-021 Alert delays by product class", ["2025-04-08 Alert threshold revisit"]),
    ("latest decision on temperature alert thresholds", "ADR-021 Alert delays by product class", ["2025-04-08 Alert threshold revisit"]),
    ("how long do we keep raw telemetry now?", "ADR-034 Keep raw telemetry for 13 months", ["2026-01-27 Data retention review"]),
    ("what did we decide in January 2026 about data retention?", "ADR-034 Keep raw telemetry for 13 months", ["2026-01-27 Data retention review"]),
    ("which region did we move production to?", "ADR-027 Move production to eu-central-1", ["2025-09-16 Cloud region move"]),
    ("notes from the latest Halyard steering meeting", "2026-02-17 Halyard steering", []),
    ("most recent board meeting", "2026-02-10 Board meeting", []),
    ("my last 1:1 with Priya", "2026-02-03 1-1 with Priya", []),
    ("the most recent quarterly planning", "2026-01-13 Q1 2026 planning", []),
]

# Older notes in each series that a temporal query must NOT be answered with (checked by
# check_labels.py): the superseded decisions are derived from frontmatter; meeting series are here.
SERIES = {
    "notes from the latest Halyard steering meeting": ["2025-05-13 Halyard steering", "2025-06-03 Halyard steering", "2025-09-30 Halyard steering", "2025-10-21 Halyard steering", "2025-12-02 Halyard steering", "2026-01-20 Halyard steering"],
    "most recent board meeting": ["2024-02-20 Board meeting", "2025-02-18 Board meeting"],
    "my last 1:1 with Priya": ["2025-02-11 1-1 with Priya", "2025-09-09 1-1 with Priya"],
    "the most recent quarterly planning": ["2024-07-02 Q3 2024 planning", "2025-01-14 Q1 2025 planning", "2025-07-08 Q3 2025 planning"],
}

# ---------------------------------------------------------------------------------------------
# navigational: looking for a specific note by (part of) its title or a description of it
# ---------------------------------------------------------------------------------------------

NAVIGATIONAL = [
    ("the meeting notes from the Q3 2025 planning", "2025-07-08 Q3 2025 planning"),
    ("my sourdough note", "Sourdough"),
    ("my notes on The Goal", "The Goal"),
    ("post-mortem from the Black Friday spike", "2024-12-03 Black Friday spike post-mortem"),
    ("the decision log", "Decision log"),
    ("people directory", "People directory"),
    ("Lofoten trip notes", "Lofoten trip 2025"),
    ("my bouldering log", "Bouldering log"),
    ("notes from the Lisbon offsite", "2024-10-08 Lisbon offsite"),
    ("the Farmanova audit debrief", "2025-11-04 Farmanova audit debrief"),
    ("interview questions for the SRE loop", "Interview questions for SRE candidates"),
    ("tax return checklist", "Tax return 2025"),
    ("my kimchi recipe", "Kimchi"),
    ("the ADR about Keycloak", "ADR-030 Keycloak for single sign-on"),
    ("the phishing incident review", "2025-12-09 Phishing incident review"),
    ("reefer alarm post-mortem", "2025-03-18 Reefer alarm post-mortem"),
    ("my marathon training plan", "Running plan"),
    ("reading list", "Reading list"),
    ("notes on Designing Data-Intensive Applications", "Designing Data-Intensive Applications"),
    ("the Raft paper notes", "Raft paper"),
    ("engineering reorg meeting", "2025-09-02 Engineering reorg"),
    ("the Verdelux escalation meeting", "2025-06-10 Verdelux escalation"),
    ("apartment move checklist", "Apartment move checklist"),
    ("my review of 2025", "Year in review 2025"),
    ("journal entry for 3 November 2025", "2025-11-03"),
    ("my borscht recipe", "Борщ"),
    ("the talk idea about alert thresholds", "Talk idea - alert thresholds"),
    ("home page of the vault", "Home"),
    ("Thermora vendor call notes", "2024-07-23 Thermora vendor call"),
    ("заметка про Мастера и Маргариту", "Мастер и Маргарита"),
]

# ---------------------------------------------------------------------------------------------
# paraphrase: the content of one note restated without its vocabulary
# ---------------------------------------------------------------------------------------------

PARAPHRASE = [
    ("a fast sender swamping a sluggish receiver: how does the receiver get the sender to ease off?", "Backpressure"),
    ("how do we stop a resent call from charging a customer a second time?", "Idempotency keys"),
    ("the gap between what has been published and what the processing side has caught up to", "Consumer lag"),
    ("quit contacting an unreliable downstream service for a bit after repeated errors, then carefully probe it again", "Circuit breaker"),
    ("outdated duplicates lingering after the source record was edited, and what we did about it", "Cache invalidation"),
    ("formats that let disconnected devices be edited separately and later combine into an identical outcome on their own", "CRDT"),
    ("a little trick to check whether something is on a list, which errs occasionally but in one direction only", "Bloom filter"),
    ("drawing invisible borders around places so we automatically learn when a lorry turns up or pulls away", "Geofencing"),
    ("picking which lorry visits which customers in what sequence at the lowest expense", "Vehicle routing problem"),
    ("keeping perishables continuously cold at every hand-off from producer to end user", "Cold chain"),
    ("fees a shipping line bills us when we hang on to their box too long", "Demurrage and detention"),
    ("the ocean freight paperwork that acknowledges handover and works like a deed to the shipment", "Bill of lading"),
    ("super-cold refrigerant that skips the liquid stage: why is it risky for whoever is behind the wheel?", "Dry ice shipping"),
    ("legal caps on how long truckers may steer before a mandatory pause", "Tachograph rules"),
    ("why a minor change in what shoppers buy gets magnified into huge ordering waves back toward the factories", "Bullwhip effect"),
    ("transferring freight directly between lorries that pull in and lorries that pull out, with hardly any time on shelves", "Cross-docking"),
    ("shorthand codes in a sales contract that settle who pays for carriage and border taxes, and where liability moves", "Incoterms"),
    ("jotting down each modification in a running journal first so that pulling the plug can't corrupt anything", "Write-ahead log"),
    ("that book by a doctor about short tick-box routines preventing blunders in operating rooms and airliners", "The Checklist Manifesto"),
    ("the book about reservoirs, inflows and cycles that amplify themselves, and why organisations behave oddly", "Thinking in Systems"),
    ("the classic claim that throwing extra programmers at a behind-schedule effort delays it further", "The Mythical Man-Month"),
    ("book on governments simplifying society so officials can understand it, and why big top-down blueprints go wrong", "Seeing Like a State"),
    ("the book about guarding long stretches of undisturbed concentration", "Deep Work"),
    ("the Korean chilli-fermented side dish I prepare at home: how long does it sit out before refrigerating?", "Kimchi"),
    ("what I'm growing outdoors at the new place this year", "Balcony garden"),
    ("keeping my two-wheeler in shape through the cold wet months: lubrication and pad swaps", "Bike maintenance"),
    ("the north German parking lot where our lorries exchange boxes for the Nordic runs", "Hamburg Altenwerder yard"),
    ("holiday in the Caucasus with hot mineral bathhouses and orange wine", "Tbilisi 2024"),
    ("how much of each lorry's capacity we really fill, typically", "Pallet utilization"),
    ("the autobiography about the chaotic backstage world of eateries and the people sweating over stoves", "Kitchen Confidential"),
]


def _entity_query(rng, title, kind):
    if kind == "hub":
        return title
    first = title.split()[0]
    return rng.choice(ENTITY_TEMPLATES[kind]).format(title=title, first=first)


def build(notes, resolve, expand):
    """Return (records for queries.jsonl, metadata for label_checks.json)."""

    def path(title):
        n = resolve(title)
        if n is None or n.title != title:
            raise SystemExit(f"query label names an unknown note: {title!r}")
        return n.path

    records, meta = [], {"bridge": {}, "temporal": {}}

    def add(qid, qtype, query, relevant, partial=()):
        rec = {"id": qid, "query": query, "type": qtype, "relevant": [path(t) for t in relevant]}
        if partial:
            rec["partial"] = [path(t) for t in partial]
        records.append(rec)
        return rec

    rng = random.Random(SEED + "|entity")
    for i, (title, kind, fixed, partial) in enumerate(ENTITY, 1):
        q = fixed or _entity_query(rng, title, kind)
        add(f"entity-{i:02d}", "entity", q, [title], partial)
    for i, (q, rel, *partial) in enumerate(THEME, 1):
        if not 2 <= len(rel) <= 5:
            raise SystemExit(f"theme query {q!r} has {len(rel)} relevant notes")
        add(f"theme-{i:02d}", "theme", q, rel, partial[0] if partial else ())
    for i, (q, b, a, distinct) in enumerate(BRIDGE, 1):
        qid = f"bridge-{i:02d}"
        add(qid, "bridge", q, [b], [a])
        meta["bridge"][qid] = {"via": path(a), "answer": path(b), "distinctive": distinct}
    for i, (q, rel) in enumerate(COMPARE, 1):
        add(f"compare-{i:02d}", "compare", q, rel)
    # Notes that link to the current decision record restate its title, which carries the answer
    # (the decision log, the project's list of decisions, the meeting it came from): they are
    # added as partial. Superseded records also link to it (superseded_by) and are excluded.
    inbound: dict[str, set[str]] = {}
    for n in notes:
        text = n.body + " " + " ".join(str(v) for _, v in n.frontmatter)
        for target in _LINK.findall(text):
            hit = resolve(target)
            if hit is not None and hit.path != n.path:
                inbound.setdefault(hit.path, set()).add(n.path)
    by_path = {n.path: n for n in notes}
    for i, (q, rel, partial) in enumerate(TEMPORAL, 1):
        qid = f"temporal-{i:02d}"
        rel_path = path(rel)
        extra = []
        if by_path[rel_path].kind == "decision":
            explicit = {path(t) for t in partial}
            extra = sorted(p for p in inbound.get(rel_path, ()) if not by_path[p].superseded and p not in explicit)
        rec = add(qid, "temporal", q, [rel], partial)
        if extra:
            rec["partial"] = rec.get("partial", []) + extra
        meta["temporal"][qid] = {"older_in_series": [path(t) for t in SERIES.get(q, [])]}
    for i, (q, rel) in enumerate(NAVIGATIONAL, 1):
        add(f"navigational-{i:02d}", "navigational", q, [rel])
    for i, (q, rel) in enumerate(PARAPHRASE, 1):
        add(f"paraphrase-{i:02d}", "paraphrase", q, [rel])
    return records, meta
