"""Places/, Tools/, Companies/, Inbox/, Journal/ and the hub notes in Maps/."""

from __future__ import annotations

from .common import bullets, human, link, sections, weekday

# ---------------------------------------------------------------------------------------------
# Places
# ---------------------------------------------------------------------------------------------

PLACES = [
    dict(title="Rotterdam HQ", aliases=["Rotterdam office", "HQ"], text=[
        ("", "Our head office is on the fourth floor of a converted grain warehouse on the Maashaven, a ten-minute walk from the Rijnhaven metro stop. We moved in in September 2022 after a year in a shared space in the city centre."),
        ("Facts", "- 42 desks, of which about 25 are used on a normal anchor day.\n- Three meeting rooms named Kade, Sluis and Dok; Kade is the big one with the good screen.\n- Bike storage in the basement, showers on the ground floor.\n- Lease runs until August 2027, with an option to extend for five years."),
        ("Who sits here", "Most of engineering, product, sales and finance. [[Mirela Okafor]], [[Priya Raman]], [[Tomasz Wieczorek]] and [[Lars Eriksen]] are here most days. Operations people are mostly at the [[Maasvlakte depot]] instead."),
        ("Practicalities", "The front door badge system is run by the building, not by us; new badges take three working days, so ask [[Zoë van der Berg]] early. The kitchen on our floor is shared with a design studio, who have opinions about the dishwasher."),
    ]),
    dict(title="Maasvlakte depot", aliases=["Maasvlakte"], text=[
        ("", "Our own depot on the Maasvlakte, close to the container terminals, where reefer containers come off the quay and loads are consolidated for trucks to France, Spain and Portugal. [[Oskar Lindqvist]] runs it; [[Kwame Mensah]] has his desk here too."),
        ("Layout", "- 3,200 m² under roof, built in 2009, leased since 2021.\n- Two cold rooms: 2–8 °C (about 600 pallet positions) and 15–25 °C (about 900).\n- 24 reefer plugs in the yard and eight dock doors, four of them with dock shelters.\n- Backup generator sized for the cold rooms only, tested on the first Monday of every month."),
        ("Working hours", "Two shifts, 05:00–13:30 and 13:00–21:30, six days a week. Sunday is maintenance only. The dispatch call at 06:30 is run from the small office above dock 3."),
        ("Known issues", "The yard floods in heavy rain near plugs 19–24. The Wi-Fi in cold room 2 is useless, so scanners queue their scans until they come out. See also the [[Warehouse safety checklist]]."),
    ]),
    dict(title="Lisbon office", aliases=["Lisbon"], text=[
        ("", "Our second office, opened in February 2024 in a coworking building in Marvila, on the river side of Lisbon. It started with two people and now has eleven."),
        ("People", "[[Rafael Azevedo]] leads the office. Also here: [[Sofía Castaño]], [[Beatriz Lobo]], [[Gustavo Paiva]] and [[Mateus Ribeiro]], plus the Iberian dispatch team."),
        ("Facts", "- 14 desks in a private room, meeting rooms booked through the building app.\n- The warehouse at [[Alverca warehouse|Alverca]] is 25 minutes away by car, 35 by train.\n- Lunch is usually at the tasca on the corner; the menu of the day costs €9.50."),
        ("Why Lisbon", "Most of our growth in 2024 came from Iberian lanes, and hiring engineers in Lisbon was easier than in Rotterdam. The decision to open here was made at the 2023 board meeting, before my time in this vault."),
    ]),
    dict(title="Alverca warehouse", aliases=["Alverca"], text=[
        ("", "The building we leased for [[Jib]] in Alverca do Ribatejo, about 25 km north-east of Lisbon along the A1, close to the river and the railway line."),
        ("Building", "- 6,500 m², built in 2016 as a dry warehouse for a furniture importer.\n- Fourteen dock doors on the east side, a yard for about thirty trailers.\n- Floor load 5 t/m², fine for double-stacked pallets.\n- The roof needed new insulation panels before any cold room could go in."),
        ("Status", "Refrigeration fit-out is done; the remaining blocker is the operating licence. [[Rafael Azevedo]] is on the phone with the municipality of Vila Franca de Xira most weeks."),
        ("Landlord", "A Portuguese logistics real-estate fund. Ten-year lease, break option after five. Rent is fixed for the first three years."),
    ]),
    dict(title="Antwerp cross-dock", aliases=["Antwerp"], text=[
        ("", "A partner cross-dock on the left bank of the Scheldt in Antwerp, operated by [[Dijkstra Forwarding]]. We rent about 300 pallet positions there and use it for loads that come through the Antwerp container terminals and for consolidating Belgian pharma pick-ups."),
        ("Facts", "- 22 dock doors, of which we have priority on four between 06:00 and 10:00.\n- One chilled hall at 2–8 °C; no frozen capacity.\n- Our own loggers are mounted in the hall since autumn 2025, so we do not depend on their readings."),
        ("Notes", "Trucks coming from the Netherlands avoid the Kennedy tunnel in the morning; the route through the Liefkenshoek tunnel is longer but more predictable. Their yard closes at 22:00 sharp."),
    ]),
    dict(title="Port of Valencia", aliases=["Valencia"], text=[
        ("", "Spain's busiest container port and our main pick-up point for Spanish produce heading north. Most of our loads here are reefer containers landed from overseas or fruit coming from the orchards inland."),
        ("How we use it", "Pick-ups are booked with the terminal's appointment system 24 hours ahead. Reefer containers are collected by our Spanish subcontractor and cross-loaded into trailers at a rented bay outside the port. Transit time to Rotterdam is about 34 hours with two drivers."),
        ("Watch out", "- Summer heat: trailers standing in the sun in July can take 40 minutes to pull down to 2 °C.\n- Appointment slots fill up in the citrus season, November to March.\n- Customs inspections on inbound containers can add a day without warning."),
    ]),
    dict(title="Port of Sines", aliases=["Sines"], text=[
        ("", "Deep-water port on the Alentejo coast, about 150 km south of Lisbon. Big container ships call here that cannot get into Lisbon, and since mid-2025 we run a weekly reefer lane from Sines via [[Alverca warehouse|Alverca]] to Madrid."),
        ("The lane", "One departure every Wednesday, two on peak weeks in December. Dispatch for the lane is coordinated by [[Rafael Azevedo]], who also negotiated the terminal slots. Typical cargo: fish and frozen seafood landed from South America, some pharma transhipments."),
        ("Numbers", "- About 28 loads a month in the second half of 2025.\n- Average waiting time at the terminal gate: 55 minutes.\n- Compared with Valencia, fewer but larger volumes, and much less congestion."),
    ]),
    dict(title="Hamburg Altenwerder yard", aliases=["Hamburg yard"], nolinks=True, text=[
        ("", "Partner yard near the Altenwerder container terminal in Hamburg where we swap trailers for the few loads that go on to Scandinavia. We do not have staff there; the yard operator checks seals and plugs in reefers on arrival."),
        ("Notes", "- Twelve reefer plugs, booked by phone the day before.\n- Trailer swaps only between 07:00 and 19:00 on weekdays.\n- The operator charges €45 per plug-in day, and the invoices arrive quarterly, which always surprises finance.\n- Drivers report that the yard gate camera misreads Dutch plates; have the paperwork ready."),
        ("Why we keep it", "Volume is small, about six loads a month, but two seafood customers depend on it. We review the arrangement every January."),
    ]),
    dict(title="Porto depot", aliases=["Porto"], text=[
        ("", "A small depot in Maia, north of Porto, that we share with [[Transportes Almeida]]. It is mostly a trailer drop and a place to swap drivers on the lanes to Galicia and northern Spain."),
        ("Facts", "- Twenty trailer bays, six with reefer plugs.\n- No cold room of our own; chilled cross-docking happens at Almeida's building next door.\n- Open 24 hours; Almeida's night guard has the key to our office container."),
        ("History", "Before the Lisbon office existed, this was our only presence in Portugal. [[Rafael Azevedo]] would like to close it once the [[Jib]] warehouse is running, but the Galician lanes still need a stop here."),
    ]),
]

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------

TOOLS = [
    dict(title="Kafka", aliases=["Apache Kafka"], text=[
        ("", "Distributed log used as the backbone of [[Halyard]]: every logger reading goes through it. We run it ourselves on [[Kubernetes]] rather than as a managed service, mostly for cost reasons."),
        ("Our setup", "Three brokers per region, replication factor 3, 36 partitions per telemetry topic, tiered storage to object storage after 24 hours so the brokers keep small disks. The cluster was sized by [[Tomasz Wieczorek]] from load tests at three times the 2025 peak."),
        ("Things we learned", "- Partition count is effectively permanent for keyed topics; pick it for the traffic you expect in two years.\n- Watch [[Consumer lag]] per partition, not per topic; one stuck partition hides in an average.\n- Producers must set acks=all and idempotence on, otherwise a broker restart can duplicate readings.\n- A consumer that cannot keep up needs [[Backpressure]], not more retries."),
        ("Related", "Replaced [[RabbitMQ]] for telemetry in 2025. Messages that fail processing go to a [[Dead letter queue]]. Consumer settings we tuned the hard way are collected in [[Kafka consumer tuning]] (still to be written)."),
    ]),
    dict(title="RabbitMQ", aliases=[], text=[
        ("", "Message broker we used for Halyard telemetry until 2025 and still use for job queues in [[Bowline]] and [[Capstan]], where per-message routing and acknowledgements matter more than throughput."),
        ("What it is good at", "- Flexible routing with exchanges and bindings.\n- Per-message acknowledgement and redelivery, which makes work queues simple.\n- Easy to operate at our scale for job queues: one three-node cluster, quorum queues."),
        ("Where it hurt", "At telemetry volumes the queues backed up whenever a consumer slowed down, and memory alarms blocked publishers, which is a crude form of [[Backpressure]]. Replaying history was impossible because messages are gone once acknowledged. That is why telemetry moved to [[Kafka]]."),
        ("Numbers", "Job queues peak at around 300 messages per second. Telemetry at the time of the switch was 9,000 per second and climbing."),
    ]),
    dict(title="PostgreSQL", aliases=["Postgres"], text=[
        ("", "Our default database for transactional data: orders, shipments, customers, contracts, declarations, invoices. Everything that is not time-series telemetry lives in Postgres."),
        ("Setup", "Managed Postgres 16, one primary and two replicas per region, daily snapshots kept 35 days, point-in-time recovery for seven days. Logical replication feeds the warehouse, see [[Change data capture]]."),
        ("Conventions", "- Every table has created_at and updated_at, in UTC.\n- Migrations are reviewed by two people and must be backwards compatible for one release.\n- No ORM-generated migrations in production without reading the SQL.\n- Long-running analytical queries go to the warehouse, not the replicas."),
        ("Related", "[[Write-ahead log]] explains how replication and recovery work underneath. The old telemetry store, [[TimescaleDB]], was an extension on top of Postgres."),
    ]),
    dict(title="TimescaleDB", aliases=["Timescale"], text=[
        ("", "Postgres extension for time-series data that we used as the telemetry store for Halyard from 2024 until the migration in 2025. It turns a table into hypertables partitioned by time."),
        ("Why we picked it", "The team already knew Postgres, it could join telemetry against shipment tables directly, and continuous aggregates gave us per-minute and per-hour rollups for charts. At the volumes we had in 2024 it was plenty."),
        ("Why we left", "By mid-2025 the database held 14 TB of readings, compression jobs competed with ingest during the morning peak, and dashboard queries over long ranges took tens of seconds. Storage cost was the biggest line on the cloud bill. Compare [[ClickHouse]]."),
        ("Still useful for", "Small time-series workloads that need transactions or joins with relational data. We would pick it again for a project with a few hundred sensors."),
    ]),
    dict(title="ClickHouse", aliases=[], text=[
        ("", "Columnar analytical database. Since 2025 it stores all logger telemetry for [[Halyard]] and is the warehouse behind [[Keel]] and [[Fathom]]."),
        ("Setup", "A managed three-replica cluster. Telemetry tables use MergeTree ordered by logger and time, partitioned by month. Raw readings are kept for the retention period, with per-minute and per-hour rollups (see [[Time-series downsampling]])."),
        ("What changed after the move", "- The same 14 TB of readings took about 1.9 TB compressed.\n- A 90-day temperature chart renders in under a second instead of twenty.\n- Writes must be batched; we insert every two seconds from the consumer, never row by row.\n- Updates and deletes are expensive, so corrections are written as new rows."),
        ("Compared with TimescaleDB", "Much better compression and scan speed, worse at transactional joins. We keep relational data in [[PostgreSQL]] and join in the warehouse instead."),
    ]),
    dict(title="Redis", aliases=[], text=[
        ("", "In-memory data store we use as a cache and for short-lived shared state. Nothing in Redis is the source of truth; everything can be rebuilt."),
        ("Where we use it", "- Session cache for the customer portal.\n- Counters for the public API rate limiter (see [[Rate limiting]]).\n- ETA cache for live shipments, refreshed every minute.\n- A spatial index of depots and customer sites, kept in a cluster of six shards."),
        ("Rules", "Every key has a TTL. Keys are namespaced by service. If you need persistence, you need a database, not Redis. Memory alerts fire at 75%, not 90%, because eviction under pressure is where bugs hide."),
        ("See also", "[[Cache invalidation]] for the problems we have actually had."),
    ]),
    dict(title="Grafana", aliases=[], text=[
        ("", "Dashboards and alerting for everything operational: infrastructure, service health, consumer lag, and the internal KPI views from [[Fathom]]."),
        ("Dashboards worth knowing", "- 'Ingest overview': readings per second, lag per consumer group, error rates.\n- 'Fleet dwell-time heatmap': how long trailers stand at each site, by hour of day. It is maintained by [[Femi Adeyemi]], and operations use it in the weekly review.\n- 'Cost': daily cloud spend by team, fed from the billing export.\n- 'On-call': pages per week and time to acknowledge."),
        ("Conventions", "Dashboards are provisioned from code and reviewed like any other change. Alert rules must link a runbook. Anything in a folder called 'scratch' is deleted after 30 days."),
    ]),
    dict(title="Terraform", aliases=[], text=[
        ("", "All cloud infrastructure is declared in Terraform: networks, clusters, databases, buckets, DNS, identity. Nothing is created by hand in the console, apart from emergencies, which are then imported."),
        ("Layout", "One repository, one directory per environment and region, shared modules in their own folder. State is stored remotely with locking. Plans run in CI on every pull request and are posted as a comment."),
        ("Rules", "- Two approvals for anything touching production networking or identity.\n- Modules are versioned; environments pin a version.\n- Tags for team and cost centre on every resource, enforced by a policy check, so that [[Ballast]] could attribute the bill."),
        ("Who", "[[Ingrid Solberg]] owns the conventions; [[Mateus Ribeiro]] maintains the modules for the Portuguese sites."),
    ]),
    dict(title="Kubernetes", aliases=["k8s"], text=[
        ("", "Where almost all our services run: one managed cluster per region, plus a small staging cluster."),
        ("Setup", "- Node groups for general services, for Kafka brokers (with local NVMe) and for batch jobs on spot instances.\n- Deployments through a GitOps controller watching the deploy repository.\n- Resource requests are mandatory; limits on memory only."),
        ("Lessons", "Most of our incidents in 2024 were not Kubernetes' fault but our own configuration: missing readiness probes, pods without requests landing on the same node, and a cron job with no concurrency limit that started 400 copies of itself. Ask [[Ingrid Solberg]] before adding an operator to the cluster."),
    ]),
    dict(title="dbt", aliases=["data build tool"], text=[
        ("", "SQL transformation framework used for all warehouse models since early 2025. Models are version-controlled, tested and documented in the same repository."),
        ("How we use it", "Staging models clean raw tables one to one; intermediate models join; marts are what dashboards read. Every mart has tests for uniqueness and not-null keys, and a description that names its owner. Incremental models are used for anything derived from telemetry."),
        ("Conventions", "- A model without a test does not get merged.\n- Metric definitions live in one place; if a dashboard computes its own, it is wrong.\n- Runs are triggered by [[Dagster]], never by cron.\n- [[Femi Adeyemi]] reviews every change to a finance mart."),
    ]),
    dict(title="Airflow", aliases=["Apache Airflow"], text=[
        ("", "Workflow orchestrator we ran from 2023 until mid-2025 for nightly data jobs, before moving to [[Dagster]]."),
        ("What worked", "It is mature, every data engineer has used it, and the scheduler is reliable once tuned. Our 40-odd DAGs ran fine most nights."),
        ("What did not", "- Tasks know nothing about the data they produce, so lineage lived in people's heads.\n- Local testing of a DAG was painful; most bugs were found in production.\n- Backfills with dependencies across DAGs needed manual work every time.\n- Upgrading between major versions took two people most of a sprint."),
        ("Verdict", "Fine for task scheduling, awkward for a warehouse built around models and tables. See the comparison in [[Dagster]]."),
    ]),
    dict(title="Dagster", aliases=[], text=[
        ("", "Data orchestrator we moved to in 2025. It models pipelines as assets (tables, files, models) rather than tasks, which matches how we think about the warehouse."),
        ("Why we switched from Airflow", "- Assets give lineage for free: you can see which dashboards depend on a raw table.\n- Pipelines are plain Python that can be tested locally with fake resources.\n- Partitioned backfills are built in.\n- The dbt integration maps each model to an asset, with no glue code."),
        ("Costs", "A smaller community than [[Airflow]] and fewer ready-made integrations; we wrote our own sensor for the customs broker's file drops. Migration of all jobs took about seven weeks."),
        ("Setup", "Runs on [[Kubernetes]]; each run is a pod. [[Femi Adeyemi]] owns it."),
    ]),
    dict(title="OR-Tools", aliases=["Google OR-Tools"], text=[
        ("", "Open-source optimisation library from Google with a constraint solver, a routing library and linear-programming wrappers. [[Spinnaker]] uses its routing library for our vehicle routing models."),
        ("How we use it", "Each planning run builds a routing model with capacity dimensions per trailer compartment, time windows per stop and a driving-time dimension per driver. We start from a cheap first solution and improve it with guided local search for a fixed time budget."),
        ("Notes", "- Results vary with the time budget; always report the budget with a result.\n- Costs must be integers, so we scale euros by 100.\n- Infeasible problems return nothing useful; we relax the softest constraints first and log what was relaxed."),
        ("See also", "[[Vehicle routing problem]], [[Time windows]]."),
    ]),
    dict(title="Flutter", aliases=[], text=[
        ("", "Cross-platform UI framework from Google, written in Dart. The rewritten driver app, [[Mooring]], has been built with it since 2025."),
        ("Why", "- Rendering is done by the framework itself, so the app looks and behaves the same on cheap Android phones and on iPhones.\n- Startup time and memory use on low-end devices were clearly better than our previous app in a prototype test.\n- Strong offline storage and background-sync libraries."),
        ("Downsides", "Dart is a language nobody on the team knew before; hiring for it in Rotterdam is harder. Platform-specific features (Bluetooth pairing with loggers) need native plugins, and we maintain one ourselves."),
        ("Compare", "[[React Native]], which we used for the first version."),
    ]),
    dict(title="React Native", aliases=[], text=[
        ("", "Cross-platform mobile framework from Meta that renders native components driven by JavaScript. The first version of the driver app was built with it in 2024."),
        ("What went well", "We shipped the first version in eleven weeks with web developers who already knew React. Code sharing with the portal's validation logic was handy."),
        ("What went wrong", "- Crash rate on old Android phones was high, mostly out-of-memory in the photo flow.\n- The background sync library we depended on was abandoned by its maintainer.\n- Upgrades across versions broke native modules every time.\n- Start-up on a three-year-old budget phone took over six seconds."),
        ("Outcome", "Replaced by [[Flutter]] in 2025. Still a fine choice for apps used on good phones by office workers."),
    ]),
    dict(title="Sentry", aliases=[], nolinks=True, text=[
        ("", "Error tracking for the portal, the driver app and backend services. Every unhandled exception ends up here with a stack trace, release version and a breadcrumb trail."),
        ("Conventions", "- Every service sets the release and environment tags.\n- Alerts go to the owning team's channel, never to a shared one.\n- An issue that fires more than a hundred times a day without an owner is muted and raised at the weekly engineering meeting.\n- Personal data is scrubbed on the client side before sending; drivers' phone numbers once leaked into breadcrumbs and that took a week to clean up."),
        ("Quotas", "We are on a plan with a monthly event quota. The driver app uses most of it; sampling is set to 20% for non-fatal events on mobile."),
    ]),
    dict(title="Keycloak", aliases=[], text=[
        ("", "Open-source identity and access management server. Chosen for [[Cleat]] in October 2025 as the broker for staff and customer single sign-on."),
        ("Why", "- Self-hosted, so customer identity data stays in our EU regions.\n- Federation with Google Workspace for staff and with customers' own providers over SAML or OpenID Connect.\n- Fine-grained roles for the portal without writing our own user management."),
        ("Operating it", "Runs on [[Kubernetes]] with two replicas and its own Postgres database. Realm configuration is exported to the repository and applied by CI. Upgrades are done in staging first and have broken a theme twice."),
        ("Owner", "[[Nadia Haddad]]."),
    ]),
]

# ---------------------------------------------------------------------------------------------
# Companies
# ---------------------------------------------------------------------------------------------

ORGS = [
    dict(title="Farmanova", aliases=["Farmanova BV"], text=[
        ("", "Pharmaceutical wholesaler based in Utrecht and our largest customer. We carry their 2–8 °C products — vaccines, insulin, biologics — from their Dutch warehouse to hospital pharmacies and wholesalers in Belgium, France and Spain."),
        ("Account", "- Customer since April 2023; account owner [[Lars Eriksen]], executive contact [[Jonas Brandt]].\n- About €2.1 million revenue in 2025, roughly 22% of the total.\n- Their quality manager, Ellen de Wit, is the person who signs off our audits.\n- Contract renews every January; current term runs to the end of 2026."),
        ("History", "They were the first beta customer of [[Halyard]] and pushed hardest for the per-shipment temperature record. Their audit in November 2025 was the reason [[Gaff]] exists."),
        ("Sensitivities", "Any excursion on their loads is escalated to Lars within the hour, day or night. They require a deviation report within 24 hours and a root-cause analysis within ten working days."),
    ]),
    dict(title="BioCura Labs", aliases=["BioCura"], text=[
        ("", "Biotech company in Leiden running clinical trials across Europe. We move their trial samples and investigational medicines, some chilled, some frozen on dry ice."),
        ("Account", "- Customer since March 2024; account owner [[Lars Eriksen]].\n- Main contact: Dr. Pieter Zwart, head of clinical supply.\n- Revenue about €480,000 in 2025, small but with high margins.\n- Their GDP audit of us is scheduled for spring 2026."),
        ("What they need", "Frozen shipments at −20 °C and below, many small consignments to trial sites, and full documentation for every shipment. They care more about the paperwork than about speed. See [[Dry ice shipping]] for the constraints."),
        ("Compared with Farmanova", "Much smaller volumes and much more varied destinations; where [[Farmanova]] is steady lanes, BioCura is a new address every week."),
    ]),
    dict(title="Verdelux", aliases=["Verdelux BV"], text=[
        ("", "Fresh-produce importer in Barendrecht, near Rotterdam, supplying Dutch and German supermarkets. They buy fruit and vegetables from Spain, Portugal and Morocco and we bring it north."),
        ("Contract", "- Customer since 2022, one of our first.\n- Contracted volume of about 1,200 pallets a month, peaking in spring.\n- Lanes from Valencia, Huelva and Murcia; some loads from the [[Port of Valencia]].\n- Account owner is [[Jonas Brandt]], day-to-day contact with [[Kwame Mensah]]."),
        ("What they care about", "Price, reliability of the slot at their distribution centre, and arriving cold enough that the buyer does not reject the load. They are less interested in documentation than pharma customers but very interested in claims."),
        ("Notes", "Their head of logistics is a former truck driver who will call Kwame directly if a load is late. They were a beta customer of [[Halyard]]."),
    ]),
    dict(title="Nordhavn Seafood", aliases=["Nordhavn"], text=[
        ("", "Seafood exporter in Esbjerg, Denmark, shipping fresh fish on ice to restaurants and wholesalers in Spain and Portugal."),
        ("Account", "- Customer since September 2024, brought in by [[Lars Eriksen]] through a Danish contact.\n- About 300 pallets a month, very seasonal.\n- Loads travel at 0–2 °C and must arrive within 48 hours of packing.\n- Trailers are swapped at the [[Hamburg Altenwerder yard]] on the way south."),
        ("Compared with Verdelux", "Smaller volume but a much tighter temperature band and a hard deadline; a late load of fish is a total loss, while a late load of oranges is a discount. See [[Verdelux]]."),
        ("Friction", "They would like us to take back the polystyrene boxes for recycling. We have not found a way to do that economically."),
    ]),
    dict(title="Thermora", aliases=["Thermora BV"], text=[
        ("", "Dutch manufacturer of temperature loggers, based in Eindhoven. They were our first hardware vendor for [[Halyard]], selected in July 2024."),
        ("What went wrong", "In August 2024, eleven loggers on the Seville lanes came back with swollen batteries after a week of 44 °C heat in parked trailers, and two of them stopped reporting altogether. The vendor's answer was a firmware setting that reduced the reporting rate, which defeated the point. Their support replied within two weeks on average."),
        ("Outcome", "We replaced them with [[Coldlink]] in 2025 and retired the last Thermora unit in October 2025. About 450 units were written off."),
        ("Fair to say", "Their loggers were cheap at €74 each, the housing was robust, and the calibration certificates were excellent. The battery chemistry was simply wrong for southern Spain in summer."),
    ]),
    dict(title="Coldlink", aliases=["Coldlink OÜ"], text=[
        ("", "Estonian maker of cellular temperature loggers, based in Tallinn. Our main hardware vendor since 2025; every active logger in [[Halyard]] is theirs."),
        ("The hardware", "- LTE-M and NB-IoT with 2G fallback, GPS, a second probe input for split trailers.\n- Rated from −30 °C to +70 °C ambient.\n- €89 per unit at our volume, plus €1.10 a month for connectivity.\n- Open enough that [[Gustavo Paiva]] could port our own firmware in [[Lanyard]]."),
        ("Working with them", "Support in English, usually the same day. They send an engineer to Rotterdam twice a year. Their hardware roadmap includes a light sensor to detect door openings, which we asked for."),
        ("Contract", "Three-year supply agreement from March 2025, with a price review after 5,000 units."),
    ]),
    dict(title="Dijkstra Forwarding", aliases=["Dijkstra"], text=[
        ("", "Family-owned forwarding company from Antwerp, third generation, with about 120 employees. They operate the [[Antwerp cross-dock]] where we rent space, and we subcontract some Belgian pick-ups to their trucks."),
        ("Relationship", "- Contract since 2023, renewed yearly.\n- Main contact: Wim Dijkstra, operations director and grandson of the founder.\n- Invoices monthly; disputes are settled over lunch, not over email."),
        ("Good to know", "They are excellent at pharma handling and weak at IT; their systems export a spreadsheet twice a day, which [[Femi Adeyemi]] ingests. They would consider a joint venture for a second Belgian site, which [[Jonas Brandt]] keeps bringing up."),
    ]),
    dict(title="Currach Ventures", aliases=["Currach"], text=[
        ("", "Seed-stage venture fund in Dublin, focused on logistics and industrial software. They led our seed round in 2022. Their second fund, raised in 2023, is about €90 million, and they typically keep a reserve for follow-on rounds."),
        ("Investment", "- Seed round of €3.5 million in May 2022, led by Currach.\n- Participated pro rata in the €12 million Series A in March 2024.\n- Partner on our board: [[Ruairí Ó Briain]]."),
        ("How they work", "Light touch between board meetings, useful introductions to logistics buyers in Ireland and the UK, and a yearly portfolio gathering in Dublin in September that [[Jonas Brandt]] says is the best networking of his year. They expect monthly investor updates by email: revenue, cash, headcount, one win and one worry."),
    ]),
    dict(title="Transportes Almeida", aliases=["Almeida"], text=[
        ("", "Portuguese haulier from Leiria with about 60 trucks, 25 of them reefers. Our main subcontractor for Iberian lanes and our neighbour at the [[Porto depot]]."),
        ("Relationship", "- Working together since 2023; [[Rafael Azevedo]] knew the owner's son from his previous job.\n- Rates renegotiated every March.\n- Their drivers use our app, [[Mooring]], since 2025."),
        ("Quality", "On-time performance of 96% on our loads in 2025. Two excursions in the year, both on trailers older than ten years, which they have since retired."),
        ("Contacts", "The owner, Sr. Almeida, still signs every contract himself; his son Nuno runs dispatch and is the person to call at night. Invoices come monthly and are paid on 30 days; they asked for 15 and we compromised on 21 for the summer peak."),
    ]),
]

# ---------------------------------------------------------------------------------------------
# Inbox: loose notes, mostly unlinked
# ---------------------------------------------------------------------------------------------

INBOX = [
    dict(title="Interview questions for SRE candidates", nolinks=True, text=[
        ("", "Working list for the SRE loop. The idea is to find out how people think during an incident and whether they write things down, not whether they know every flag of every tool."),
        ("Warm-up", "- Tell me about the last incident you were involved in. What did you do in the first ten minutes?\n- What is a page you would delete from your last job's rotation, and why?"),
        ("Scenario", "- Ingest lag is growing, CPU on the consumers is low, the broker looks healthy. Walk me through it.\n- A disk is filling at 2% an hour on a database primary at 03:00. What do you do, and what do you not do?"),
        ("Values", "- When did you push back on a deadline because of reliability? What happened?\n- How do you write a post-mortem that nobody feels blamed by?"),
        ("Scoring", "Strong hire signals: asks clarifying questions, states assumptions, mentions communication with the people affected. Red flags: jumps to restarting things, blames a person."),
    ]),
    dict(title="Onboarding checklist for engineers", nolinks=False, text=[
        ("", "Draft of what a new engineer should have done by the end of week one and week four. Zoë keeps the company-wide version; this is the engineering part."),
        ("Week one", "- Laptop, accounts, single sign-on, password manager.\n- Read the last three post-mortems and the current architecture overview.\n- Ship one small change to production with a buddy.\n- Spend a morning at the [[Maasvlakte depot#Working hours|Maasvlakte depot]] with the dispatch team; watch the 06:30 call."),
        ("Week four", "- Shadow an on-call week (no pager yet).\n- Present one thing you found confusing in the codebase at the Friday demo.\n- Have a 1:1 with [[Mirela Okafor]] about expectations for the first six months."),
        ("Open questions", "Should new hires ride along with a driver for a day? Kwame thinks yes; insurance needs to check. Also whether the [[Driver onboarding pack]] should be shared with engineers."),
    ]),
    dict(title="Podcasts to try", nolinks=True, text=[
        ("", "Collected from recommendations at work and from friends; I listen on the train on Fridays and while cooking."),
        ("Work-ish", "- A supply-chain show that interviews operations people from retailers; somebody at the Rotterdam meetup swore by it.\n- An engineering-leadership interview series; episodes on managing managers are the good ones.\n- A podcast about shipping disasters, told episode by episode; morbid but educational."),
        ("Not work", "- A long-form history podcast about the Hanseatic League.\n- A cooking show where two chefs argue about one ingredient per episode.\n- A Portuguese-language news summary, ten minutes a day, to practise listening."),
        ("Rule", "If I have not started one within a month of adding it, it goes. Three already went this way in 2025."),
    ]),
    dict(title="Tax return 2025", nolinks=True, text=[
        ("", "Checklist for filing the Dutch income tax return for 2025, due 1 May 2026. Doing it in March this time, not on the last weekend of April."),
        ("Documents", "- Annual salary statement from payroll (arrives in February).\n- Mortgage interest statement from the bank.\n- Statement of the savings account and the small investment account as of 1 January.\n- Receipts for the donations to the two registered charities."),
        ("Things to check", "- Whether the 30% ruling period still applies for part of the year — it does not, it ended in 2024.\n- Box 3 values on 1 January 2025.\n- Whether the new bike counts as anything (it does not)."),
        ("Last year's mistakes", "Forgot the second savings account, got a letter in September. Put the login codes in the password manager this time."),
    ]),
    dict(title="Gift ideas", nolinks=True, text=[
        ("", "Running list so I stop panicking in December. Prices are rough, from the last time I looked."),
        ("Family", "- Mum: the ceramics course in Delft she mentioned twice (about €180 for six evenings).\n- Dad: a good pair of binoculars for the birding trips; he likes the 8x42 size.\n- My sister: a proper chef's knife, she has been using a bread knife for everything."),
        ("Friends", "- The couple who host the board-game nights: a new co-operative game, not another deck-builder.\n- My running friend: a head torch for winter evenings.\n- Anyone: a jar of the kimchi, which apparently counts as a gift now."),
        ("Done", "- Birthday present for my sister (the cookbook) — bought in June.\n- Wedding present for my cousin — gave money, as they asked."),
    ]),
    dict(title="Things to ask Hannah", nolinks=False, text=[
        ("", "Questions for the next call with [[Hannah Pohl]]. She prefers them in an email a few days before, so this is the draft."),
        ("Questions", "- How do auditors treat a short excursion that is inside the product's stability budget but outside the label range? Do they want a deviation report anyway?\n- Is there published guidance on where to place probes in split trailers?\n- Would she co-author a short paper on our alert-threshold data if the customers agree?\n- What is a sensible sampling interval for products that tolerate 25 °C for a few hours?"),
        ("For her", "- Send the anonymised excursion data from 2025 she asked for.\n- Confirm the master's student can visit the depot in April."),
    ]),
    dict(title="Apartment move checklist", nolinks=True, text=[
        ("", "Moving from Kralingen to Noord in early 2026. Keys on 15 January, old lease ends 31 January, so there are two weeks of overlap to paint and move slowly."),
        ("Before", "- Give notice on the old lease (done, October).\n- Book the moving company for a Saturday; they need the street permit from the municipality.\n- Change the address with the municipality, the bank, the health insurer, payroll.\n- Order internet for the new place at least three weeks ahead."),
        ("After", "- Take meter readings on both sides, with photos.\n- Deep clean of the old place; the deposit is two months' rent.\n- Balcony at the new place faces south-west, so the tomato plants come along."),
        ("Budget", "Movers €850, paint and supplies around €300, cleaning €250."),
    ]),
    dict(title="Bike maintenance", nolinks=True, text=[
        ("", "Notes on keeping the commuter bike alive through a Rotterdam winter, because I keep forgetting between years."),
        ("Monthly", "- Clean and oil the chain; salt on the roads eats it in weeks otherwise.\n- Check tyre pressure, 4.5 bar front and rear.\n- Test both lights, and carry the spare battery pack in winter."),
        ("Yearly", "- New brake pads before November.\n- Service at the shop on the Oudedijk in March: hub gear oil, cables, spoke tension.\n- Replace the chain every 3,000 km or so."),
        ("History", "Second bike stolen in 2023 from outside the station, despite two locks. The current one has a frame lock and a chain lock, and insurance with a tracker sticker that I am not sure does anything."),
    ]),
    dict(title="Talk idea - alert thresholds", nolinks=False, text=[
        ("", "Idea for a twenty-minute talk at a logistics or observability meetup, maybe at the Rotterdam one in spring."),
        ("Pitch", "How long should a shipment be too warm before you wake someone up? The story of how we picked our alert thresholds, got them wrong, and changed them. What auditors care about versus what customers notice versus what on-call people can tolerate."),
        ("Outline", "1. The insulin-on-the-tarmac story as the opener.\n2. Why a fixed number of minutes is both too sensitive and not sensitive enough.\n3. Product classes, and why pharma and fresh food need different rules.\n4. The data: pages per week before and after the change.\n5. What we would do next: stability budgets instead of minutes."),
        ("Links", "[[Temperature excursion]], [[Alert fatigue]], [[Mean kinetic temperature]]."),
    ]),
    dict(title="Questions for the Coldlink visit", nolinks=False, text=[
        ("", "Their engineer visits Rotterdam in March 2026. [[Gustavo Paiva]] and I want answers to these, ideally in writing afterwards. Background on the vendor and the contract terms in [[Coldlink#Contract]]."),
        ("Hardware", "- When will the light sensor for detecting door openings ship, and can it be retrofitted?\n- Battery behaviour at −25 °C in frozen trailers: our field data shows 20% shorter life than the datasheet.\n- Can the second probe input take a product-simulant probe in a glycol bottle?"),
        ("Firmware and security", "- Do they support signed firmware images with our own key, so that only our builds can be installed?\n- Modem firmware updates: who pushes them, and how do we hear about them in advance?"),
        ("Commercial", "- Price review after 5,000 units: what is the next price band?\n- Lead time for 1,000 units in the autumn peak."),
    ]),
    dict(title="Halyard v2 ideas", nolinks=False, text=[
        ("", "Parking lot for ideas after GA, so they stop creeping into the launch scope. Nothing here is planned; [[Priya Raman]] decides what gets shaped."),
        ("Ideas", "- Alert on remaining stability budget instead of minutes outside the band, as in [[Paper - Stability budgets in pharmaceutical transport|Hannah's paper]].\n- Detect door openings from the light sensor and stop treating every delivery as a possible excursion.\n- Predict arrival temperature: if the trailer is warming slowly, warn before the load leaves the band.\n- Share live readings with the receiving warehouse so they can prepare cold space."),
        ("Not doing", "- A mobile app for customers. The portal works on phones.\n- Custom dashboards per customer.\n- Blockchain anything, whatever the tender says."),
        ("Related", "[[Halyard]]"),
    ]),
    dict(title="Offsite 2026 ideas", nolinks=True, text=[
        ("", "Collecting ideas for next year's offsite before Zoë asks. Last year's worked because the agenda was short and there was real time to talk."),
        ("Where", "- Porto, in October, if the budget allows flights for everyone from Rotterdam.\n- Somewhere in Zeeland by train, cheaper, good for walking.\n- Stay near the Lisbon warehouse so people can finally see it running."),
        ("What", "- Half a day on the three-year plan, with the numbers sent in advance.\n- A customer visit, in small groups.\n- A session where each team demos something unfinished.\n- Cooking together again; people still talk about the last one."),
        ("Avoid", "- Workshops with sticky notes and no decisions.\n- Sessions after dinner.\n- More than two hours of presentations on the same day."),
    ]),
]

# ---------------------------------------------------------------------------------------------
# Journal: short daily notes. A few carry specific facts that queries target.
# ---------------------------------------------------------------------------------------------

JOURNAL = [
    ("2025-01-06", ["First day back. Inbox at 212 unread; declared bankruptcy on anything older than 20 December.", "Planning doc for Q1 is due next week; started the outline."], ["2025-01-14 Q1 2025 planning"], ["maasvlakte-sunrise.jpg"]),
    ("2025-02-19", ["Long day of interviews for the SRE role, three candidates. One was clearly strong; wrote the debrief on the train.", "The strong one asked better questions about our alerting than I could answer. Note to self: our alert inventory is not written down anywhere.", "Evening: fed the starter, baked nothing."], [], []),
    ("2025-03-19", ["Post-mortem yesterday went well. Ingrid's timeline was excellent, everyone stayed calm.", "Slept badly. The idea that alarms were being swallowed for three weeks before anyone noticed keeps nagging me.", "What would have caught it earlier: a check that every logger that sends readings also sends its heartbeat events. Asked Ingrid to add it."], ["2025-03-18 Reefer alarm post-mortem"], []),
    ("2025-04-14", ["Ran 18 km along the Maas in the rain. Legs fine, lungs less so.", "Started reading the systems-thinking book again; it reads differently after a year of incidents."], [], []),
    ("2025-04-23", ["Rain all day; cancelled the long run and went to the gym instead.", "One-to-one with Femi about the data platform roadmap. He is doing well and wants more visibility; promised to bring him to the next leadership review.", "Started a new notebook for the year's ideas; the old one is full of crossed-out plans."], [], []),
    ("2025-05-27", ["Steering meeting prep took all afternoon. Everyone knows the date will move; nobody wants to say it first.", "Wrote two versions of the risk slide, one honest and one diplomatic. Sent the honest one.", "Cooked shakshuka for six. Too much cumin."], [], []),
    ("2025-06-11", ["Verdelux escalation yesterday; the temperature record was clear but the conversation was not fun.", "Good that the data settled the argument within five minutes. Two years ago it would have been our word against the driver's.", "Evening sailing on the Kralingse Plas, barely any wind."], ["2025-06-10 Verdelux escalation"], []),
    ("2025-07-21", ["Half the team on holiday. Quiet week; cleaned up the backlog of the team board.", "Closed 48 tickets older than six months without losing anything anyone missed.", "Booked flights for Japan in October."], [], []),
    ("2025-08-29", ["Last day before a long weekend. Wrote my self-review; it was easier than last year because I kept this journal.", "Biggest gap in the review: I delegate the interesting work and keep the admin. Needs to flip.", "Note to self: ask Zoë whether the offsite date is fixed."], [], []),
    ("2025-09-15", ["Back from the bouldering gym with a torn fingertip.", "Read the first chapters of the team-design book; it is making me rethink who owns the alerting pipeline.", "If product teams own their services, who owns the shared ingestion path? Platform, probably, as a service with a clear interface.", "Typing with nine fingers is slow."], [], []),
    ("2025-10-29", ["Jet-lagged after Japan. Rotterdam grey and 9 °C.", "Three hundred Slack messages; skimmed, answered the two that mattered.", "Came back to a slipped date and a region move in four weeks. The holiday feeling lasted until about 10:00."], [], []),
    ("2025-11-03", ["Lars forwarded a request from [[BioCura Labs]]: could we take frozen trial samples on dry ice to a hospital in Tenerife? Air freight only, so we would have to subcontract. Told him I would ask Sofía about the customs side of the Canaries, which are outside the EU VAT area.", "Capstan cut-over today. No fires by 18:00."], ["BioCura Labs"], []),
    ("2025-12-10", ["Phishing review yesterday. Uncomfortable but useful.", "The person who clicked was brave to say so immediately; that is what limited the damage. Said so in the review.", "Bought the Christmas presents from the list; two left."], ["2025-12-09 Phishing incident review"], []),
    ("2025-12-22", ["Last working day of the year. Office almost empty; cleaned my desk and the fridge.", "Wrote a short thank-you note to each of my direct reports. It took two hours and was the best two hours of the month.", "Train to my parents tomorrow; bringing a jar of kimchi they will pretend to like."], [], []),
    ("2026-01-15", ["Keys to the new apartment. Empty rooms echo.", "Measured the walls for the bookshelves; the big one fits with two centimetres to spare.", "Mirela asked me to write the engineering part of the board pack."], [], ["new-flat-keys.jpg"]),
    ("2026-02-02", ["Long run, 28 km, the longest so far this block. Marathon in April feels possible now.", "Took gels every 40 minutes as planned; no stomach trouble this time.", "Dentist at 16:00, forgot, rebooked."], [], []),
    ("2026-02-18", ["Started drafting the talk on alert thresholds. The outline is there; the data section needs numbers from Femi.", "Second load test next week. If it passes, April holds. If not, I do not want to be in that steering meeting.", "Kimchi batch seven is too salty."], [], []),
]

JOURNAL_FILL = [
    "«Weather:|Outside:» «grey and windy|sunny but cold|drizzle all day|properly warm for once|fog over the Maas in the morning».",
    "«Mood:|Energy:» «good|tired|restless|fine|scattered»«.|, too much coffee.|, better after lunch.»",
    "«Walked to work|Cycled in|Worked from home|Took the metro in» «and listened to a podcast|with my head full of the week's hardest conversation|and answered messages on the way|and enjoyed the quiet».",
    "«Read|Got through» «twenty pages|a chapter|a few pages» of «the current book|the book on my nightstand|something for work» before «bed|falling asleep|the lights went out».",
    "«To do tomorrow:|Tomorrow:» «finish the review|call the landlord|book the dentist|reply to Hannah|clean the kitchen».",
    "«Dinner was|Cooked» «leftover soup|pasta with whatever was in the fridge|rice and eggs|the usual Tuesday lentils».",
    "«Good thing today:|Small win:|Grateful for:» «a quiet hour in the morning to think|a colleague who fixed something before I asked|sun on the balcony at lunch|a long call with my sister».",
    "«Meetings: five, two of them useful.|Calendar back to back until four.|Light calendar for once; blocked the afternoon for writing.|Mostly 1:1s today, which I like.»",
    "«Slept badly and it shows.|Sleep: seven hours, fine.|Slept well for once.|Went to bed late, woke up early; coffee helped.»",
    "«Exercise: easy run, 8 km, felt good.|No exercise today.|Climbing with Marta in the evening.|A long walk along the water after work.»",
    "«Thinking about|Keep coming back to|On my mind:» «how to give feedback to someone senior|whether we are hiring fast enough|what to cut from next quarter|how to say no to a good idea»«.|, no conclusion yet.|; write it down tomorrow.»",
]

# ---------------------------------------------------------------------------------------------
# Hubs
# ---------------------------------------------------------------------------------------------

HUBS = [
    dict(title="Home", aliases=["Index", "Start here"], intro="Start page of this vault. Work notes about Brackwater on one side, my own life on the other, and a few maps of content that tie topics together. I keep this page short on purpose. I am an engineering manager at Brackwater, responsible for the platform and data teams, and this vault is where I think: meeting notes, decisions, concepts I had to learn, books, recipes and trips. Folders are by type, not by project; links and the maps below do the rest."),
    dict(title="Brackwater", aliases=["Brackwater Logistics", "the company"], intro="Brackwater Logistics is a cold-chain transport and visibility company founded in 2021 in Rotterdam by [[Jonas Brandt]] and [[Hélène Marchetti]]. We move temperature-sensitive goods, mostly medicines and fresh food, between the Benelux, France and Iberia, using contracted reefer trucks, and we sell live temperature tracking as part of the service. About 25 people, in Rotterdam and Lisbon. Funded by a seed round from [[Currach Ventures]] in 2022 and a €12 million Series A in March 2024."),
    dict(title="People directory", aliases=["Who is who"], intro="Everyone I work with, with their role and where they sit. Outside contacts at the bottom."),
    dict(title="Projects index", aliases=["Projects overview"], intro="All internal projects. Names follow the sailing theme that [[Jonas Brandt]] started with Halyard and nobody has been brave enough to break."),
    dict(title="Decision log", aliases=["ADR index", "Decisions index"], intro="Architecture and company decision records, newest first. When a decision is replaced, the old record stays, is marked superseded and points to its replacement. Always read the newest record on a topic."),
    dict(title="Distributed systems MOC", aliases=["Distributed systems"], intro="Map of my notes on distributed systems and backend engineering, the stuff that comes up in Halyard design reviews."),
    dict(title="Cold chain MOC", aliases=["Cold chain map"], intro="Map of domain notes: temperature-controlled transport, customs, warehousing and the rules around medicines. Most of this I learned the hard way after joining a logistics company with a software background. The notes are written for someone like me two years ago: an engineer who knows what a queue is but not what a reefer plug or a transit guarantee is."),
    dict(title="Reading list", aliases=["Books"], intro="Books, papers and articles, with a one-line verdict. Ratings are out of five and say more about my mood at the time than about the book."),
    dict(title="Life MOC", aliases=["Life"], intro="Everything that is not work: cooking, travel, sport and the rest. Recipes are the versions I actually cook, with the mistakes noted. Trips have costs, because future me always asks. Sport notes are logs more than plans, and the plans rarely survive the first month."),
]


def _text_blocks(rng, text, title):
    blocks = []
    if rng.random() < 0.5:
        blocks.append(f"# {title}")
    for head, body in text:
        blocks.append(f"## {head}\n\n{body}" if head else body)
    return sections(blocks)


def register(ctx):
    for p in PLACES:
        ctx.add("Places", p["title"], "place", aliases=p["aliases"]).data = p
    for t in TOOLS:
        ctx.add("Tools", t["title"], "tool", aliases=t["aliases"]).data = t
    for o in ORGS:
        ctx.add("Companies", o["title"], "org", aliases=o["aliases"]).data = o
    for i in INBOX:
        ctx.add("Inbox", i["title"], "inbox").data = i
    for d, *_ in JOURNAL:
        ctx.add("Journal", d, "journal")
    for h in HUBS:
        ctx.add("Maps", h["title"], "hub", aliases=h["aliases"]).data = h


def write(ctx):
    for kind, tag in (("place", "place"), ("tool", "tool"), ("org", "company")):
        for n in ctx.of_kind(kind):
            rng = n.rng()
            n.frontmatter = [("aliases", n.data["aliases"]), ("tags", [tag])]
            n.body = _text_blocks(rng, n.data["text"], n.title)
    for n in ctx.of_kind("inbox"):
        rng = n.rng()
        n.frontmatter = [("tags", ["inbox"])]
        n.body = _text_blocks(rng, n.data["text"], n.title)
    for d, items, links, images in JOURNAL:
        n = ctx.get(d)
        rng = n.rng()
        n.frontmatter = [("date", d), ("tags", ["journal"])]
        lines = list(items)
        fill = rng.sample(JOURNAL_FILL, k=rng.choice([9, 10, 11]))
        lines += [ctx.expand(rng, f) for f in fill]
        rng.shuffle(lines)
        head = f"# {weekday(d)} {human(d)}"
        body = [head, bullets(lines)]
        mentioned = [item for item in links if f"[[{item}]]" not in "\n".join(items)]
        if mentioned:
            body.append("Related: " + ", ".join(link(item) for item in mentioned))
        for img in images:
            body.append(f"![[{img}]]")
        n.body = sections(body)
    _write_hubs(ctx)


def _write_hubs(ctx):
    people = ctx.of_kind("person")
    projects = ctx.of_kind("project")
    decisions = ctx.of_kind("decision")
    concepts = ctx.of_kind("concept")
    reading = ctx.of_kind("reading")
    life = ctx.of_kind("life")
    for h in HUBS:
        n = ctx.get(h["title"])
        n.frontmatter = [("aliases", h["aliases"]), ("tags", ["moc"])]
        blocks = [f"# {h['title']}", h["intro"]]
        t = h["title"]
        if t == "Home":
            blocks.append("## Work\n\n" + bullets([
                "[[Brackwater]] — the company in one page",
                "[[People directory]] · [[Projects index]] · [[Decision log]]",
                "[[Distributed systems MOC|Distributed systems]] · [[Cold chain MOC|Cold chain]]",
                "Meetings live in `Meetings/<year>/`, decisions in `Decisions/`.",
            ]))
            blocks.append("## Me\n\n" + bullets(["[[Reading list]]", "[[Life MOC]]", "Daily notes in `Journal/`, loose ends in `Inbox/`."]))
            blocks.append("## Currently open decisions\n\n![[Decision log#Current decisions]]")
        elif t == "Brackwater":
            blocks.append("## Where we are\n\n" + bullets([link(p.title) for p in ctx.of_kind("place")]))
            blocks.append("## Customers and partners\n\n" + bullets([link(o.title) for o in ctx.of_kind("org")]))
            blocks.append("## Leadership\n\n" + bullets(["[[Jonas Brandt]] — CEO", "[[Hélène Marchetti]] — CFO", "[[Mirela Okafor]] — engineering", "[[Lars Eriksen]] — sales"]))
            blocks.append("## Numbers (end of 2025)\n\n" + bullets([
                "Revenue about €9.6 million in 2025, up from €5.8 million in 2024.",
                "Roughly 14,000 shipments in 2025, 61% pharma and biotech by revenue.",
                "About 25 employees plus 38 contracted trucks and a network of subcontracted hauliers.",
            ]))
        elif t == "People directory":
            rows = ["| Name | Role | Based |", "|---|---|---|"]
            for p in people:
                d = p.data
                rows.append(f"| {link(p.title)} | {d['role']} | {d['loc'].split()[0] if d['loc'] else 'external'} |")
            blocks.append("\n".join(rows))
        elif t == "Projects index":
            active = [p for p in projects if p.data["status"] != "done"]
            done = [p for p in projects if p.data["status"] == "done"]
            blocks.append("## Active\n\n" + bullets([f"{link(p.title)} — {p.data['status']}; owner {link(p.data['owner'])}" for p in active]))
            blocks.append("## Finished\n\n" + bullets([f"{link(p.title)} — owner {link(p.data['owner'])}" for p in done]))
        elif t == "Decision log":
            cur = [d for d in decisions if not d.superseded]
            old = [d for d in decisions if d.superseded]
            key = lambda d: (d.data["date"], d.title)
            blocks.append("## Current decisions\n\n" + bullets([f"{d.data['date']} {link(d.title)}" for d in sorted(cur, key=key, reverse=True)]))
            blocks.append("## Superseded\n\n" + bullets([f"{d.data['date']} {link(d.title)} → replaced by {link(d.data['superseded_by'])}" for d in sorted(old, key=key, reverse=True)]))
        elif t == "Distributed systems MOC":
            tech = [c for c in concepts if c.data["area"] == "tech"]
            blocks.append("## Concepts\n\n" + bullets([link(c.title) for c in tech if not c.data.get("nolinks")]))
            blocks.append("## Tools\n\n" + bullets([link(x.title) for x in ctx.of_kind("tool") if not x.data.get("nolinks")]))
            blocks.append("## Papers\n\n" + bullets([link(r.title) for r in reading if r.data["type"] == "paper"]))
        elif t == "Cold chain MOC":
            dom = [c for c in concepts if c.data["area"] == "domain"]
            blocks.append("## Concepts\n\n" + bullets([link(c.title) for c in dom if not c.data.get("nolinks")]))
            blocks.append("## Where it matters\n\n" + bullets(["[[Halyard]] — live tracking", "[[Gaff]] — audit readiness", "[[Bowline]] — customs", "[[Farmanova]] and [[BioCura Labs]] — the customers who care most"]))
        elif t == "Reading list":
            groups = {}
            for r in reading:
                groups.setdefault(r.data["status"], []).append(r)
            for status in ("reading", "read", "to read"):
                if status in groups:
                    items = []
                    for r in groups[status]:
                        if r.data.get("nolinks"):
                            continue
                        stars = f" — {r.data['rating']}/5" if r.data.get("rating") else ""
                        items.append(f"{link(r.title)} ({r.data['author']}){stars}")
                    blocks.append(f"## {status.capitalize()}\n\n" + bullets(items))
        elif t == "Life MOC":
            groups = {}
            for item in life:
                groups.setdefault(item.data["group"], []).append(item)
            blocks.append("Rough split of my free time in 2025, by my own guess: a third cooking, a third sport, the rest reading and travel.")
            for g in ("Cooking", "Travel", "Sport and hobbies"):
                blocks.append(f"## {g}\n\n" + bullets([link(item.title) for item in groups.get(g, []) if not item.data.get("nolinks")]))
        n.body = sections(blocks)
