"""Projects/: fifteen internal projects, named after bits of a sailing boat."""

from __future__ import annotations

from .common import bullets, link, sections

PROJECTS = [
    dict(
        title="Halyard", aliases=["Project Halyard", "HAL"], status="beta", started="2024-02",
        owner="Priya Raman", lead="Tomasz Wieczorek", members=["Yusuf Demir", "Ingrid Solberg", "Gustavo Paiva", "Elif Yıldız"],
        goal="Give shippers, and ourselves, a live view of where every temperature-controlled load is and how warm it is, with alerts that fire early enough to save the cargo. Today most customers only learn about a temperature problem when the logger is read out at the destination, which is days too late to do anything but file a claim.",
        how="Loggers in each trailer or container report a reading every 60 seconds over LTE-M. Readings land on an ingestion gateway, go onto [[Kafka]] and are consumed by three services: the alert evaluator, the telemetry writer into [[ClickHouse]], and the ETA service. Alert rules are set per customer and per product class (see [[Temperature excursion]]). Customers use it through [[Tiller]]; drivers see their own load in [[Mooring]].",
        numbers=[
            "About 1,900 active loggers in February 2026, up from 600 a year earlier.",
            "Peak ingest of roughly 40,000 readings per second during the morning reconnect storm, when trucks leave the depots.",
            "Median alert latency of 41 seconds from reading to customer notification; p99 is 3 minutes.",
            "Seven beta customers, including [[Farmanova]] and [[Verdelux]].",
        ],
        timeline=[
            ("2024-02", "Kickoff; first design doc by Tomasz."),
            ("2024-09", "First trailer streaming live on the Rotterdam–Lyon lane."),
            ("2025-03", "Broker migration started after the ingestion review."),
            ("2025-06", "First general-availability date set; it has moved since, the [[Decision log#Current decisions|decision log]] has the current one."),
        ],
        risks=[
            "Alert noise: customers mute alerts if we cry wolf, see [[Alert fatigue]].",
            "Logger connectivity in rural Spain and in port areas with heavy steel.",
            "Too much of the knowledge sits with Tomasz.",
        ],
        tools=["Kafka", "ClickHouse", "Grafana", "Kubernetes"], concepts=["Cold chain", "Consumer lag", "Backpressure"],
    ),
    dict(
        title="Spinnaker", aliases=["Project Spinnaker"], status="production", started="2024-06",
        owner="Kwame Mensah", lead="Aino Järvinen", members=["Dmitri Volkov", "Femi Adeyemi"],
        goal="Plan multi-stop reefer routes that respect delivery windows, temperature zones in split trailers and drivers' hours, and cut the kilometres we drive empty. Dispatch used to plan routes by hand in a spreadsheet every evening, which took two people about three hours.",
        how="A nightly batch run at 22:00 plans the next day, and a re-plan is triggered when an order is added or a truck breaks down. The model is a capacitated routing problem with time windows, solved with [[OR-Tools]]. Inputs are confirmed orders, trailer compartments, travel-time estimates and the demand estimates from [[Sextant]]. Plans are pushed to dispatch and to the drivers' phones.",
        numbers=[
            "Pilot on the Rotterdam–Lyon lanes from January to March 2025: 8.5% fewer empty kilometres.",
            "Solve time under 90 seconds for 180 stops and 25 trucks.",
            "Dispatch planning time down from about three hours to forty minutes per evening.",
        ],
        timeline=[
            ("2024-06", "Project started with a two-week feasibility study."),
            ("2024-09", "Solver choice made after a benchmark."),
            ("2025-01", "Pilot on the Lyon lanes."),
            ("2025-04", "Rolled out to all Benelux–France lanes."),
        ],
        risks=[
            "Travel-time estimates are poor around Antwerp and Paris during rush hour.",
            "Dispatchers override the plan when they do not trust it; we track the override rate.",
        ],
        tools=["OR-Tools", "PostgreSQL"], concepts=["Vehicle routing problem", "Time windows"],
    ),
    dict(
        title="Bowline", aliases=["Project Bowline"], status="live (NL), expanding", started="2024-11",
        owner="Sofía Castaño", lead="Yusuf Demir", members=["Femi Adeyemi"],
        goal="File customs declarations and transit documents automatically from the shipment data we already have. Until late 2024 we sent our Rotterdam broker the commercial invoices by fax, of all things, and someone there re-keyed every line into the customs system. Errors were common and every mistake meant a truck waiting at the border.",
        how="When a shipment is booked for a cross-border lane, Bowline builds the declaration from the order, the product master data and the tariff codes Sofía maintains. It submits through our broker's API, handles the replies and puts anything uncertain into a review queue. It also raises the transit document when goods move under customs supervision, see [[T1 transit document]] and [[EU customs declaration]].",
        numbers=[
            "About 1,150 declarations a month by January 2026.",
            "Rejection rate down from 6% to 0.8% after the first three months.",
            "Average human review time per declaration down from 12 minutes to 3.",
        ],
        timeline=[
            ("2024-11", "Kickoff after one truck waited nineteen hours at the border over a typo."),
            ("2025-02", "First live declarations for Dutch exports."),
            ("2025-06", "Transit documents added."),
        ],
        risks=[
            "Tariff code master data is maintained by one person.",
            "Broker API has no sandbox; we test against a mock.",
        ],
        tools=["PostgreSQL", "RabbitMQ"], concepts=["Idempotency keys", "Incoterms"],
    ),
    dict(
        title="Keel", aliases=["Project Keel"], status="finishing", started="2024-10",
        owner="Femi Adeyemi", lead="Femi Adeyemi", members=["Dmitri Volkov", "Elif Yıldız"],
        goal="Move analytics off nightly dumps of the production database into a proper warehouse, so that reports stop locking production tables and analysts stop waiting until morning for yesterday's numbers.",
        how="Changes flow from [[Postgres]] through [[Change data capture]] into [[ClickHouse]]. Transformations are [[dbt]] models, orchestrated by [[Dagster]]. Raw tables keep history; marts are rebuilt incrementally every fifteen minutes.",
        numbers=[
            "212 dbt models as of January 2026.",
            "Full nightly rebuild took 2 h 40 min; incremental runs now take under 25 minutes.",
            "Historical backfill only from 2022 onwards; older data stays in cold storage.",
        ],
        timeline=[
            ("2024-10", "Started; warehouse technology chosen in the same month."),
            ("2025-02", "Transformation tool decided."),
            ("2025-05", "Orchestrator decided."),
            ("2025-12", "Old nightly dump job switched off."),
        ],
        risks=["Metric definitions drift between dashboards and finance reports."],
        tools=["ClickHouse", "dbt", "Dagster", "PostgreSQL"], concepts=["Change data capture", "Schema evolution"],
    ),
    dict(
        title="Mooring", aliases=["Project Mooring", "driver app"], status="production", started="2024-05",
        owner="Priya Raman", lead="Chen Wei", members=["Beatriz Lobo", "Marta Kowalczyk"],
        goal="Give drivers one app for the job: today's stops, proof of delivery, the temperature of their own trailer and a way to report problems without calling dispatch. Before Mooring, drivers used three apps and a paper form.",
        how="The app syncs the route plan in the morning and works offline for the rest of the day, queueing proof-of-delivery photos, signatures and checklists until it has signal. It shows the trailer readings relayed from [[Halyard]]. Navigation is handed off to the driver's preferred maps app.",
        numbers=[
            "About 210 drivers use it every week.",
            "Crash-free sessions at 99.6% on the rewritten version, up from 97.1%.",
            "Offline queue holds up to 400 events; we have never seen more than 160 in the field.",
        ],
        timeline=[
            ("2024-05", "First version built with a cross-platform framework."),
            ("2025-01", "Rewrite decided after a year of crash reports."),
            ("2025-06", "Rewritten app rolled out to all drivers."),
        ],
        risks=[
            "Very old Android phones among subcontracted drivers.",
            "Drivers photograph delivery notes in poor light; OCR fails about one time in ten.",
        ],
        tools=["Flutter", "Sentry"], concepts=["Last-mile delivery", "Geofencing"],
    ),
    dict(
        title="Capstan", aliases=["Project Capstan"], status="live since November 2025", started="2025-01",
        owner="Hélène Marchetti", lead="Yusuf Demir", members=["Femi Adeyemi"],
        goal="Replace spreadsheet-driven invoicing with a billing service that prices shipments automatically, applies contract terms and sends invoices to the accounting system without anyone copying numbers by hand.",
        how="Shipment events are turned into billable lines; a pricing engine applies the customer's contract (base rate, surcharges, service-level credits) and the result is posted to the accounting system once a day. Invoice generation is keyed so that replays never double-bill, see [[Idempotency keys]].",
        numbers=[
            "About 1,400 invoices a month.",
            "Manual invoice corrections down from 9% of invoices to 2%.",
            "Cut-over on 3 November 2025, after a month of running both systems in parallel.",
        ],
        timeline=[
            ("2025-01", "Kickoff."),
            ("2025-08", "Scope change after the new pricing model was approved."),
            ("2025-11", "Cut-over."),
        ],
        risks=["Contract terms are still negotiated as free text and must be encoded by hand."],
        tools=["PostgreSQL", "RabbitMQ"], concepts=["Idempotency keys", "Exactly-once delivery"],
    ),
    dict(
        title="Sextant", aliases=["Project Sextant"], status="production", started="2024-04",
        owner="Kwame Mensah", lead="Dmitri Volkov", members=["Aino Järvinen", "Femi Adeyemi"],
        goal="Forecast pallet demand per lane four to six weeks ahead, so that operations can contract trucks and warehouse slots early instead of paying spot rates the week before.",
        how="A gradient-boosted model per lane family, trained weekly on three years of bookings plus calendar features (holidays, harvest seasons in Spain and Portugal). Forecasts are reconciled hierarchically so that lanes add up to regions. The output feeds [[Spinnaker]] and the weekly capacity meeting.",
        numbers=[
            "Mean absolute percentage error of 14% at lane-week level, 6% at region-week level.",
            "Spot-rate spend down by about €18,000 a month since the forecast went live.",
        ],
        timeline=[
            ("2024-04", "Started when Dmitri joined."),
            ("2024-10", "First forecasts used in the capacity meeting."),
            ("2025-05", "Weather features proposed."),
        ],
        risks=["Winter accuracy is clearly worse than summer; still under investigation."],
        tools=["Dagster", "ClickHouse"], concepts=["Bullwhip effect"],
    ),
    dict(
        title="Ballast", aliases=["Project Ballast"], status="done", started="2025-01",
        owner="Ingrid Solberg", lead="Ingrid Solberg", members=["Mateus Ribeiro", "Tomasz Wieczorek"],
        goal="Bring the monthly cloud bill down without making anything less reliable. In January 2025 we were spending about €41,000 a month, which Hélène pointed out was more than our whole Lisbon payroll.",
        how="Rightsizing of every node group, spot instances for batch work, reserved capacity for the steady part of the load, deleting forgotten snapshots and test clusters, and moving telemetry to a columnar store that compresses far better. The region move in late 2025 was partly a cost decision too.",
        numbers=[
            "Monthly bill from about €41,000 (January 2025) to €27,000 (December 2025).",
            "Storage cost for telemetry down 70% after the columnar migration.",
            "Forty-one orphaned volumes and six abandoned test clusters deleted in the first month.",
        ],
        timeline=[
            ("2025-01", "Cost review started."),
            ("2025-07", "Telemetry storage migration approved."),
            ("2025-12", "Target reached; project closed."),
        ],
        risks=["Spot interruptions during the nightly routing run."],
        tools=["Terraform", "Kubernetes", "Grafana"], concepts=["SLOs and error budgets"],
    ),
    dict(
        title="Bosun", aliases=["Project Bosun"], status="ongoing", started="2024-10",
        owner="Ingrid Solberg", lead="Ingrid Solberg", members=["Mateus Ribeiro", "Tomasz Wieczorek"],
        goal="Make being on call bearable: fewer pages, clearer runbooks, a predictable incident process and a place where everything about an incident is written down.",
        how="An incident bot in Slack opens a channel, pages the right rotation and keeps a timeline. Runbooks live in the service repositories and are linked from every alert. Alert routing rules decide who gets paged for what. Post-mortems use one template and are reviewed every second Friday.",
        numbers=[
            "23 runbooks covering every paging alert.",
            "Median time to acknowledge a page: 6 minutes.",
            "Pages per on-call week down from 31 to 9 between October 2024 and October 2025.",
        ],
        timeline=[
            ("2024-10", "Started after a rough autumn on call."),
            ("2025-01", "Incident bot live."),
            ("2025-06", "Rotation redesigned."),
        ],
        risks=["Runbooks rot when services change; we review them quarterly."],
        tools=["Grafana", "Sentry", "Kubernetes"], concepts=["Alert fatigue", "SLOs and error budgets"],
    ),
    dict(
        title="Lanyard", aliases=["Project Lanyard"], status="ongoing", started="2024-08",
        owner="Gustavo Paiva", lead="Gustavo Paiva", members=["Marta Kowalczyk"],
        goal="Own the firmware of our temperature loggers instead of depending on each vendor's, so that we can switch hardware without rewriting the platform and ship fixes ourselves.",
        how="Firmware written in Rust for a Nordic nRF9160 cellular module. A reading every 60 seconds, thirty days of buffered readings when offline, alarm events sent immediately with retries. Over-the-air updates are staged to 1%, then 10%, then the whole fleet, with a hold of 48 hours between stages.",
        numbers=[
            "Battery life target of 14 months at one reading a minute; field average so far 12.5.",
            "Firmware v2.3.1 fixed the buffer rollover bug found in March 2025.",
            "Hardware-in-the-loop test rig with 12 loggers in a climate cabinet.",
        ],
        timeline=[
            ("2024-08", "Started."),
            ("2024-10", "Language chosen for the firmware."),
            ("2025-03", "Review rule for firmware changes adopted."),
            ("2025-05", "Ported to the new vendor's hardware."),
        ],
        risks=["Only one person can write the firmware; Marta is learning."],
        tools=["Grafana"], concepts=["Write-ahead log", "Retries and backoff"],
    ),
    dict(
        title="Tiller", aliases=["Project Tiller", "customer portal"], status="production", started="2024-03",
        owner="Priya Raman", lead="Elif Yıldız", members=["Beatriz Lobo", "Marta Kowalczyk"],
        goal="A customer portal where shippers follow their loads, set their alert rules, invite colleagues and download the temperature record of every shipment without emailing us.",
        how="A web app on top of the public API. The live map and charts read from [[Halyard]]. Every delivered shipment gets a signed PDF certificate with its full temperature trace, which quality managers attach to their batch release records. Login goes through single sign-on from [[Cleat]].",
        numbers=[
            "64 customer accounts and about 410 monthly active users.",
            "Around 2,300 PDF certificates downloaded per month.",
            "Support emails asking for temperature data down 80% since launch.",
        ],
        timeline=[
            ("2024-03", "Started."),
            ("2024-09", "First customers onboarded."),
            ("2025-10", "Single sign-on integration."),
        ],
        risks=["Customers want custom reports we do not want to build one by one."],
        tools=["Keycloak", "Sentry"], concepts=["Feature flags"],
    ),
    dict(
        title="Cleat", aliases=["Project Cleat"], status="ongoing", started="2025-09",
        owner="Nadia Haddad", lead="Nadia Haddad", members=["Ingrid Solberg", "Elif Yıldız"],
        goal="One identity for every person who touches our systems: staff through single sign-on with enforced MFA, customers through their own identity provider where they have one, and quarterly access reviews that take an afternoon rather than a week.",
        how="[[Keycloak]] as the identity broker, federating Google Workspace for staff and customers' identity providers for the portal. Provisioning and deprovisioning through SCIM where tools support it. Access reviews are generated as a checklist per system owner.",
        numbers=[
            "Target: every internal tool behind single sign-on by 31 March 2026; 27 of 34 done in February.",
            "Time for a quarterly access review down from five working days to one.",
        ],
        timeline=[
            ("2025-09", "Started."),
            ("2025-10", "Identity provider chosen."),
            ("2025-12", "Accelerated after the phishing incident."),
        ],
        risks=["A handful of legacy tools have no SSO support at all."],
        tools=["Keycloak", "Terraform"], concepts=["Rate limiting"],
    ),
    dict(
        title="Gaff", aliases=["Project Gaff"], status="ongoing", started="2025-03",
        owner="Anouk Visser", lead="Lars Eriksen", members=["Oskar Lindqvist", "Gustavo Paiva"],
        goal="Be ready for pharma customers' audits against [[GDP]] at any time, not just in the two weeks before an audit.",
        how="Standard operating procedures for receiving, storing and shipping medicines; temperature mapping of both cold rooms; a deviation and corrective-action log; supplier qualification of hauliers; calibration tracking for every logger; training records for warehouse staff, including temporary workers.",
        numbers=[
            "Farmanova audit in November 2025 passed with two minor findings and no major ones.",
            "41 SOPs written or rewritten.",
            "Cold-room mapping done summer and winter, 15 probes per room.",
        ],
        timeline=[
            ("2025-03", "Started after Farmanova announced its audit."),
            ("2025-11", "Audit passed."),
            ("2026-02", "Preparing for the BioCura audit."),
        ],
        risks=["Temporary warehouse staff rotate too fast for training records to keep up."],
        tools=[], concepts=["Mean kinetic temperature", "Temperature excursion"],
    ),
    dict(
        title="Fathom", aliases=["Project Fathom"], status="production", started="2025-02",
        owner="Femi Adeyemi", lead="Femi Adeyemi", members=["Elif Yıldız"],
        goal="Dashboards people actually use: a small set of internal KPIs everyone agrees on, and monthly reports for customers that do not need a data engineer to produce.",
        how="Dashboards read from the warehouse built in [[Keel]]. Internal views live in [[Grafana]]; customer-facing monthly reports are generated as documents and sent automatically on the third working day of the month.",
        numbers=[
            "31 dashboards, down from 74 after we deleted the ones nobody opened.",
            "On-time-in-full of 94.2% across 2025.",
            "Excursion rate of 0.6% of shipments in 2025, down from 1.4% in 2024.",
        ],
        timeline=[
            ("2025-02", "Started."),
            ("2025-06", "First automated customer reports."),
        ],
        risks=["Two definitions of 'on time' still exist in sales decks."],
        tools=["Grafana", "ClickHouse"], concepts=["Time-series downsampling"],
    ),
    dict(
        title="Jib", aliases=["Project Jib", "Lisbon warehouse project"], status="building", started="2025-01",
        owner="Rafael Azevedo", lead="Rafael Azevedo", members=["Oskar Lindqvist", "Kwame Mensah", "Anouk Visser"],
        goal="Open our own temperature-controlled cross-dock near Lisbon, so that Iberian loads no longer depend on rented space at a third-party warehouse whose cold rooms we cannot audit ourselves.",
        how="A 6,500 m² leased building at the [[Alverca warehouse]] site with two cold rooms (2–8 °C and 15–25 °C), fourteen dock doors and space for about 1,800 pallet positions. Operations will copy the [[Maasvlakte depot]] playbook, adapted by Oskar.",
        numbers=[
            "6,500 m², 14 dock doors, about 1,800 pallet positions.",
            "Fit-out budget €1.9 million, of which €640,000 for refrigeration.",
            "Staffing plan of 9 people for the first year.",
        ],
        timeline=[
            ("2025-01", "Lease signed and kickoff."),
            ("2025-06", "Refrigeration contractor selected."),
            ("2025-09", "Opening date moved; the current one is in the [[Decision log#Current decisions|decision log]]."),
        ],
        risks=["Permits from the municipality take longer than anyone promises."],
        tools=[], concepts=["Cross-docking", "Pallet utilization"],
    ),
]

SUMMARY_FORMS = ["> [!summary]\n> {goal1}", "**In one line:** {goal1}", "_{goal1}_", ""]
GOAL_HEAD = ["Goal", "Why", "Why this exists", "Problem"]
HOW_HEAD = ["How it works", "Architecture", "Scope", "Design"]
NUM_HEAD = ["Numbers", "Metrics", "Key numbers", "Where we are"]
RISK_HEAD = ["Risks", "Open questions", "Risks and worries", "What could go wrong"]
REL_HEAD = ["Related", "See also", "Links"]


def register(ctx):
    for p in PROJECTS:
        n = ctx.add("Projects", p["title"], "project", aliases=p["aliases"])
        n.data = p
    ctx.data["projects"] = PROJECTS


def write(ctx):
    decisions_by_project = ctx.data.get("decisions_by_project", {})
    meetings_by_project = ctx.data.get("meetings_by_project", {})
    for p in PROJECTS:
        n = ctx.get(p["title"])
        rng = n.rng()
        n.frontmatter = [("aliases", p["aliases"]), ("tags", ["project"]), ("status", p["status"]),
                         ("owner", link(p["owner"])), ("started", p["started"])]
        blocks = []
        if rng.random() < 0.7:
            blocks.append(f"# {p['title']}")
        goal1 = p["goal"].split(". ")[0].rstrip(".") + "."
        form = rng.choice(SUMMARY_FORMS)
        if form:
            blocks.append(form.format(goal1=goal1))
        blocks.append(f"## {rng.choice(GOAL_HEAD)}\n\n{p['goal']}")
        team = [f"Owner: {link(p['owner'])}"]
        if p["lead"] != p["owner"]:
            team.append(f"{rng.choice(['Tech lead', 'Lead', 'Engineering lead'])}: {link(p['lead'])}")
        if p["members"]:
            team.append("Also: " + ", ".join(link(m) for m in p["members"]))
        blocks.append("## Team\n\n" + bullets(team))
        blocks.append(f"## {rng.choice(HOW_HEAD)}\n\n{p['how']}")
        blocks.append(f"## {rng.choice(NUM_HEAD)}\n\n" + bullets(p["numbers"]))
        blocks.append("## Timeline\n\n" + bullets([f"**{d}** — {t}" for d, t in p["timeline"]]))
        blocks.append(f"## {rng.choice(RISK_HEAD)}\n\n" + bullets(p["risks"]))
        rel = []
        decs = decisions_by_project.get(p["title"], [])
        if decs:
            rel.append("Decisions: " + ", ".join(link(d) for d in decs))
        if p["tools"]:
            rel.append("Tools: " + ", ".join(link(t) for t in p["tools"]))
        if p["concepts"]:
            rel.append("Concepts: " + ", ".join(link(c) for c in p["concepts"]))
        mts = meetings_by_project.get(p["title"], [])
        if mts and rng.random() < 0.6:
            rel.append("Meetings: " + ", ".join(link(m) for m in mts))
        if rel:
            blocks.append(f"## {rng.choice(REL_HEAD)}\n\n" + bullets(rel))
        n.body = sections(blocks)
