"""Life/: cooking, travel, sport and hobbies. Free-form, hand-written notes."""

from __future__ import annotations

from .common import sections

LIFE = [
    # ------------------------------------------------------------------ cooking
    dict(title="Sourdough", group="Cooking", aliases=["Sourdough bread"], tags=["recipe", "baking"], text=[
        ("", "My standard loaf, after about forty attempts. The starter is called Gertrude; she came as a jar of bubbling flour paste from [[Beatriz Lobo]] in June 2024 and has survived two holidays in the back of the fridge."),
        ("Formula", "- 500 g flour: 450 g strong white, 50 g wholemeal\n- 375 g water (75% hydration)\n- 100 g active starter (20%)\n- 10 g salt (2%)"),
        ("Schedule", "1. Feed the starter in the morning, 1:5:5, it peaks after about five hours at 24 °C.\n2. Mix flour and water, rest 45 minutes, then add starter and salt.\n3. Bulk ferment about 5 hours at 24 °C, with four sets of stretch-and-folds in the first two hours.\n4. Shape, into a floured banneton, and into the fridge overnight, 12 to 16 hours.\n5. Bake from cold in a Dutch oven: 250 °C with the lid on for 20 minutes, 230 °C lid off for another 25."),
        ("Lessons", "Bulk fermentation is done when the dough has grown by about half and jiggles, not by the clock. In winter the kitchen is at 19 °C and bulk takes seven hours; I put the bowl in the oven with the light on. Compare [[Focaccia]], which is much more forgiving."),
    ]),
    dict(title="Focaccia", group="Cooking", aliases=[], tags=["recipe", "baking"], text=[
        ("", "The bread for when I want people to think I am good at baking. Almost no skill needed, just time."),
        ("Recipe", "- 500 g strong white flour\n- 400 g water (80% hydration)\n- 4 g instant yeast, or 100 g of Gertrude from the [[Sourdough]] jar for a slower, tangier version\n- 10 g salt, plenty of olive oil"),
        ("Method", "Mix everything with a spoon, no kneading. Four stretch-and-folds in the first hour, then into an oiled tray and into the fridge overnight. Next day leave it at room temperature for two to three hours until it is puffy, oil the top generously, dimple with oiled fingers, add flaky salt and rosemary. Bake at 220 °C for 25 minutes."),
        ("Versus sourdough", "Higher hydration but baked in a tray, so it cannot collapse. It forgives under- and over-proofing that would ruin a loaf. Good with cherry tomatoes and olives pressed in."),
        ("", "![[focaccia-crumb.jpg]]"),
    ]),
    dict(title="Pulpo a la gallega", group="Cooking", aliases=["Galician octopus"], tags=["recipe"], text=[
        ("", "Octopus the way they serve it in Galicia: boiled, sliced, on a wooden plate with olive oil, coarse salt and pimentón. I learned it at a pulpería in Melide on the [[Galicia trip 2024]], where the woman at the copper pot let me watch for an hour and laughed at my questions."),
        ("Method", "1. Use frozen octopus (freezing tenderises it), about 2 kg, thawed in the fridge.\n2. Bring a big pot of water to a rolling boil. Holding the head, dip the octopus in and out three times so the tentacles curl.\n3. Simmer 40 to 50 minutes until a skewer goes into the thickest part easily. Rest 10 minutes in the water.\n4. Cut the tentacles into rounds with scissors onto a wooden board."),
        ("To serve", "Generous olive oil, coarse sea salt, sweet pimentón and a pinch of hot pimentón. Boiled potatoes (cachelos) cooked in the same water underneath. Bread, and a glass of white from Ribeiro."),
        ("Notes", "Do not salt the water before the octopus goes in. My first attempt was rubbery because I boiled it too hard."),
    ]),
    dict(title="Борщ", group="Cooking", aliases=["Borscht", "Borshch"], tags=["recipe"], lang="ru", text=[
        ("", "Борщ по рецепту мамы [[Dmitri Volkov|Димы]], записанный с его слов на кухне в офисе. Он утверждает, что это единственный правильный вариант, и что любой другой — это просто свекольный суп."),
        ("Продукты", "- 600 г говядины на кости\n- 2 свёклы, 1 морковь, 1 луковица\n- 300 г белокочанной капусты\n- 3 картофелины\n- 2 ст. ложки томатной пасты, 1 ст. ложка уксуса или лимонного сока\n- лавровый лист, перец, чеснок, укроп, сметана"),
        ("Как готовить", "1. Сварить бульон из говядины, около двух часов, снимая пену.\n2. Свёклу натереть и тушить отдельно с томатной пастой и уксусом, чтобы сохранила цвет.\n3. В бульон положить картофель, через 10 минут — капусту.\n4. Обжарить лук и морковь, добавить в суп вместе со свёклой.\n5. Довести до кипения, выключить, добавить чеснок и укроп. Дать настояться хотя бы час."),
        ("Заметки", "На второй день вкуснее. Подавать со сметаной и чёрным хлебом. Дима говорит, что без сала и чеснока на хлебе это не ужин."),
    ]),
    dict(title="Shakshuka", group="Cooking", aliases=[], tags=["recipe"], text=[
        ("", "Weekend breakfast for a crowd, and my default when people come over and I have not planned anything."),
        ("For four", "- 2 onions, 2 red peppers, 4 cloves of garlic\n- 2 tins of chopped tomatoes\n- 1 tsp cumin, 1 tsp sweet paprika, a pinch of chilli flakes\n- 6 to 8 eggs\n- feta, coriander or parsley, bread"),
        ("Method", "Soften the onions and peppers slowly, 15 minutes, add garlic and spices for a minute, then the tomatoes. Simmer until thick, about 20 minutes, and season properly — it needs more salt than you think, and a squeeze of lemon at the end (see [[Salt Fat Acid Heat]]). Make wells, crack in the eggs, cover and cook on low heat until the whites are set and the yolks still runny."),
        ("Notes", "Half a teaspoon of cumin is enough; a whole one overpowers it, as six guests politely told me in May 2025. A spoon of harissa in the sauce is a good variation. Next thing to try from the same shelf of spices: a proper [[Tagine]]."),
    ]),
    dict(title="Ramen broth", group="Cooking", aliases=["Tonkotsu broth"], tags=["recipe"], text=[
        ("", "My attempts at a rich pork-bone broth, started in autumn 2025. Still not where I want it, but getting close."),
        ("Current version", "- 2 kg pork trotters and neck bones, soaked overnight in cold water\n- blanch 10 minutes, scrub, discard the water\n- 4 litres of fresh water, a rolling boil (not a simmer) for 12 hours, topping up with hot water\n- add an onion, a head of garlic and a knob of ginger for the last two hours\n- strain, reduce to about 2 litres"),
        ("Tare and oil", "Shio tare: kombu steeped in water with salt and a dash of mirin. Aroma oil: spring onion and garlic fried slowly in lard. Per bowl: 30 ml tare, 350 ml broth, a spoon of oil."),
        ("What is wrong", "Not milky enough; the boil has to be harder and the bones need more collagen, so more trotters. The flat smells for two days afterwards. The noodles from the Asian supermarket on the West-Kruiskade are good enough."),
    ]),
    dict(title="Kimchi", group="Cooking", aliases=[], tags=["recipe", "fermentation"], nolinks=True, text=[
        ("", "Napa cabbage kimchi, batch seven as of February 2026. The flat smells of it; the neighbours have not complained yet."),
        ("Recipe", "- 1 napa cabbage (about 2 kg), quartered, salted between the leaves with 100 g coarse salt for 2 hours, rinsed three times\n- paste: 4 tbsp gochugaru, 1 tbsp rice flour cooked into a porridge with 150 ml water, 6 cloves garlic, a thumb of ginger, 2 tbsp fish sauce, 1 tsp sugar\n- 4 spring onions and a grated carrot"),
        ("Fermentation", "Pack tightly into a jar, pressing out air, leave 2 days at room temperature until it smells sour and bubbles, then into the fridge. Good after a week, better after three."),
        ("Log", "Batch five was the best: less salt, more ginger. Batch seven is too salty because I did not rinse enough. Next time taste a leaf after rinsing; it should be pleasantly salty, not like the sea."),
    ]),
    dict(title="Pastéis de nata attempts", group="Cooking", aliases=["Pasteis de nata"], tags=["recipe", "baking"], text=[
        ("", "Portuguese custard tarts. Three attempts so far, none as good as the bakery around the corner from the [[Lisbon office]], which is an unfair comparison."),
        ("What I do", "- Shop-bought all-butter puff pastry, rolled into a log and cut into 2 cm discs; each disc pushed into a muffin tin with wet thumbs, thin at the bottom, thick at the rim.\n- Custard: 250 ml milk with a lemon peel and cinnamon stick, thickened with 25 g flour; a syrup of 200 g sugar and 100 ml water at 104 °C poured in; then 6 egg yolks.\n- Oven as hot as it goes, 290 °C here, for 9 to 11 minutes."),
        ("Problems", "My oven is not hot enough for the dark blisters on top. Attempt three used the grill for the last two minutes, which helped. The pastry shrinks if the dough is warm; chill the tins."),
    ]),
    # ------------------------------------------------------------------ travel
    dict(title="Galicia trip 2024", group="Travel", aliases=["Camino 2024"], tags=["travel"], date="2024-05-20", text=[
        ("", "Walked the last stretch of the Camino Francés to Santiago de Compostela, 18 to 24 May 2024. Five days on foot, a day in Santiago, a day on the coast."),
        ("Route", "- Day 1: Sarria to Portomarín, 22 km, through oak woods and past a lot of cows.\n- Day 2: Portomarín to Palas de Rei, 25 km, mostly uphill and in rain.\n- Day 3: Palas de Rei to Arzúa via Melide, 29 km, the long day. Lunch in Melide turned into two hours.\n- Day 4: Arzúa to O Pedrouzo, 19 km.\n- Day 5: O Pedrouzo to Santiago, 20 km, arriving in the square at noon.\nAbout 115 km in total."),
        ("Practical", "Slept in private albergues at €15 to €20 a night, booked a day ahead. Blisters on day two, fixed with the pharmacist's plasters. Backpack 7 kg, which was still too much. The pilgrim's certificate needs two stamps a day on the last 100 km."),
        ("After", "Day trip to Fisterra on the coast by bus. Flew home from Santiago. Total cost about €900 including flights."),
    ]),
    dict(title="Porto weekend 2025", group="Travel", aliases=["Porto trip"], tags=["travel"], date="2025-03-08", text=[
        ("", "Long weekend in Porto, 7 to 10 March 2025, combined with a visit to the depot on the Friday. Took the fast train from Lisbon, 2 h 50 min."),
        ("What we did", "- Walked the Ribeira and across the top deck of the Dom Luís I bridge at sunset.\n- Port tasting at one of the big lodges in Vila Nova de Gaia; the 20-year tawny was the surprise.\n- Francesinha at a student place near the university; enough for two, eaten by one.\n- Day trip up the Douro by train to Pinhão, vineyards on terraces on both sides."),
        ("Compared with Galicia", "A city weekend rather than a walking trip, more food and wine, far less exercise. Cheaper too: about €550 including the hotel, because the trains in Portugal are cheap. Compare the [[Galicia trip 2024]]."),
        ("Next time", "Stay in Gaia for the view of the old town, and go in May when it is warmer."),
    ]),
    dict(title="Lofoten trip 2025", group="Travel", aliases=["Lofoten"], tags=["travel"], date="2025-06-21", text=[
        ("", "A week in the Lofoten islands around midsummer, 18 to 25 June 2025. Flew to Bodø, ferry to Moskenes, stayed in a red fishing cabin (rorbu) in Reine."),
        ("Days", "- Hiked Reinebringen, about two thousand stone steps up, at 23:00 under the midnight sun, with the whole fjord glowing.\n- Kayak trip around the islands near Hamnøy.\n- Drove the E10 to Henningsvær and watched a football match on the pitch on the rocks.\n- Beach at Kvalvika, reached over a pass; cold water, white sand, not a soul."),
        ("Photos", "Shot two rolls of Portra 400 on the old camera, see [[Film photography]] for where they went to be developed. The midnight sun confuses the light meter less than it confuses me."),
        ("Cost", "About €2,100 in total: flights €520, cabin €980 for the week, car €390, food the rest. Norway is expensive; we cooked most evenings. Compare [[Kyoto trip 2025]]."),
    ]),
    dict(title="Kyoto trip 2025", group="Travel", aliases=["Japan 2025"], tags=["travel"], date="2025-10-18", text=[
        ("", "Ten days in Japan, 14 to 26 October 2025, six of them in Kyoto. Stayed in a small guesthouse near the Philosopher's Path in the east of the city, five minutes from Ginkaku-ji."),
        ("Highlights", "- Fushimi Inari at 06:30, before the tour groups; the gates go on for hours if you keep climbing.\n- Walking the Philosopher's Path every morning, early, with coffee from a tiny roaster by the canal.\n- A ramen counter near the station with eight seats and a broth so rich it coated the spoon. That bowl started my [[Ramen broth]] experiments.\n- Day trip to Nara and to the bamboo forest in Arashiyama, which was far too crowded."),
        ("Practical", "JR pass not worth it for this itinerary; bought single tickets. Suica card on the phone for buses and trains. Most places cash-only still, more than I expected."),
        ("Cost", "About €3,400: flights €1,150, guesthouse €95 a night, food and trains the rest. More expensive than [[Lofoten trip 2025]] overall, but cheaper per day once there."),
    ]),
    dict(title="Tbilisi 2024", group="Travel", aliases=["Georgia trip"], tags=["travel"], date="2024-09-14", nolinks=True, text=[
        ("", "Five days in Tbilisi in September 2024, with a day trip to the Kakheti wine region."),
        ("What stood out", "- The sulphur baths in Abanotubani: a private room with a hot pool for an hour, and a scrub that removed a layer of skin I did not know I had.\n- Khachapuri adjaruli, the boat-shaped cheese bread with an egg in the middle; one for lunch is a full day of calories.\n- Amber wine made in clay vessels buried in the ground, qvevri, at a family winery near Sighnaghi.\n- The cable car up to the fortress and the walk down through the old town."),
        ("Practical", "Cheap: about €40 a day including a nice guesthouse. Taxis through an app, never from the street. People were warm and very proud of their food, rightly."),
        ("Would go back for", "The mountains in the north, Kazbegi, which we skipped for lack of time."),
    ]),
    # ------------------------------------------------------------------ sport and hobbies
    dict(title="Film photography", group="Sport and hobbies", aliases=["Analog photography"], tags=["hobby"], text=[
        ("", "Shooting film again since 2023, on my father's old Olympus OM-1 with a 50 mm f/1.8 lens. About fifteen rolls a year."),
        ("Film I use", "- Kodak Portra 400 for colour: forgiving, lovely skin tones, expensive now at about €17 a roll.\n- Ilford HP5 for black and white, often pushed one stop in winter.\n- A few rolls of cheaper colour film for snapshots."),
        ("Development", "Colour rolls go to Foto Kolibri on the Nieuwe Binnenweg in Rotterdam: C-41 development plus scans for €14 a roll, ready in a week. Black and white I develop myself in the bathroom with a Paterson tank and a cheap developer; the results are uneven but it is half the fun."),
        ("Notes", "The light meter needs a 1.35 V battery that no longer exists; I use an adapter. Shoot a test roll after any camera service. Scans at the higher resolution are worth the extra €4 for anything I might print."),
    ]),
    dict(title="Bouldering log", group="Sport and hobbies", aliases=["Bouldering"], tags=["sport"], text=[
        ("", "Bouldering since January 2024, mostly at Blok 010, the gym in a converted tram depot in Rotterdam-Noord. I go on Tuesday evenings with [[Marta Kowalczyk]], who is much better than me and a patient coach."),
        ("Progress", "- January 2024: 5a on a good day.\n- Summer 2024: first 5c, on the slab wall.\n- March 2025: first 6a, after two months of failing the same overhang.\n- Autumn 2025: working on 6b; finger injury in September set me back six weeks."),
        ("Notes to self", "Warm up fingers properly; the torn fingertip came from a cold start on crimps. Footwork before strength. Rest days matter more than another session. Shoes resoled once a year."),
        ("Versus running", "Bouldering is social and short; running is solitary and long. They complement each other, but in the marathon block I climb less, see [[Running plan]]."),
    ]),
    dict(title="Running plan", group="Sport and hobbies", aliases=["Marathon training"], tags=["sport"], text=[
        ("", "Training for the Rotterdam Marathon on 12 April 2026. Target time 3:45, which means 5:20 per kilometre. My first marathon was Amsterdam 2023 in 4:08."),
        ("The plan", "Sixteen weeks from 5 January 2026, four runs a week:\n- Tuesday: intervals or tempo (e.g. 5 × 1 km at 4:50).\n- Thursday: easy 10 km.\n- Saturday: easy 6–8 km or rest.\n- Sunday: long run, building from 18 km to 32 km in week 13, then tapering."),
        ("Log", "- Week 1–4: fine, one missed run for the move.\n- Week 5: long run 28 km along the Maas, legs OK.\n- Week 7: calf tight after intervals, swapped a session for cycling."),
        ("Nutrition", "Gel every 40 minutes after the first hour on long runs. Practise race-day breakfast on long-run Sundays: porridge and a banana at T-minus three hours."),
        ("", "See also [[Bouldering log]] — fewer climbing sessions during the block."),
    ]),
    dict(title="Sailing", group="Sport and hobbies", aliases=["Sailing log"], tags=["hobby"], text=[
        ("", "Dinghy sailing on the Kralingse Plas since I got my CWO certificate in summer 2024. I rent a boat from the club on Wednesday evenings in the season, May to September."),
        ("What I sail", "Mostly a single-handed Laser, which is tippy and unforgiving and therefore a good teacher. Sometimes a two-person Vaurien with a friend from the club."),
        ("Log highlights", "- June 2024: first capsize, in front of the clubhouse, naturally.\n- August 2024: certificate, after a practical test in force 4.\n- June 2025: evening sail with almost no wind, drifting for an hour.\n- August 2025: first club race, finished ninth of twelve."),
        ("Goals", "A week on a keelboat in Zeeland in 2026. [[Beatriz Lobo]] sails on the Tejo and offered a day out when I am next in Lisbon."),
    ]),
    dict(title="Balcony garden", group="Sport and hobbies", aliases=[], tags=["hobby"], nolinks=True, text=[
        ("", "The balcony at the new apartment faces south-west and gets sun from noon until evening, which is a big upgrade from the old one."),
        ("Plan for 2026", "- Tomatoes: two cherry varieties and one beefsteak, in 30-litre pots, sown indoors in March.\n- Chillies: a mild one for cooking and a hot one for showing off.\n- Herbs: basil, thyme, rosemary, mint in its own pot so it does not take over.\n- Strawberries in a hanging planter, for the optimism."),
        ("Lessons from 2025", "Watering every day in July is not optional. The tomatoes split after a heavy rain following a dry week. Basil bolts in heat; pinch the flowers off. Aphids arrived in June and left when the ladybirds did."),
        ("Compost", "A small worm bin under the kitchen sink since 2025, which is less disgusting than it sounds."),
    ]),
    dict(title="Board game nights", group="Sport and hobbies", aliases=["Game nights"], tags=["hobby"], nolinks=True, text=[
        ("", "Monthly game night at a friend's place in Kralingen, usually the last Friday of the month, six to eight people. Everyone brings food; the host picks the first game."),
        ("Games that work for us", "- Co-operative games where everyone wins or loses together; they avoid the sulking.\n- A tile-laying game about building a medieval landscape, for when new people come.\n- A quick bluffing game for the end of the night, when nobody can think any more.\n- A long strategy game about trains, only when four of us commit to four hours."),
        ("Rules of the house", "No phones at the table. Explain a new game in under ten minutes or play something else. The winner does the dishes, which has done wonders for sportsmanship."),
        ("Wishlist", "A legacy game that we could play through over a year, if we can get the same group together every month, which is the hard part."),
    ]),
    dict(title="Chess openings", group="Sport and hobbies", aliases=["Chess"], tags=["hobby"], text=[
        ("", "Playing online again since 2024, rated about 1450 in rapid. Lunchtime games at the office with [[Dima]], who is rated 2000 and kind about it."),
        ("My repertoire", "- As White: the London System, because I can play it half asleep. Dima says it is a way to avoid learning chess.\n- Against 1.e4: the Caro-Kann, solid and slow.\n- Against 1.d4: the Queen's Gambit Declined."),
        ("What I am working on", "Endgames, especially rook endgames, which I lose from equal positions. Fifteen minutes of tactics puzzles a day. Reviewing every lost game the same evening, without the engine first."),
        ("Notes", "Stop playing blitz after 22:00; my rating drops every time."),
    ]),
    dict(title="Learning Portuguese", group="Sport and hobbies", aliases=["Portuguese"], tags=["language"], text=[
        ("", "Learning European Portuguese since the [[Lisbon office]] opened, because half of my work trips are to Lisbon and I was tired of switching everyone to English."),
        ("What I do", "- An app streak of about 400 days, mostly for vocabulary.\n- A one-hour online lesson every Monday with a teacher in Coimbra, €22 a lesson.\n- The ten-minute news podcast on the way to work.\n- Talking to [[Rafael Azevedo]] in Portuguese at lunch when I am in Lisbon, which he tolerates."),
        ("Difficulties", "European Portuguese swallows its vowels; Brazilian material is easier to understand but makes me sound Brazilian. The personal infinitive still confuses me."),
        ("Goal", "A2 exam in June 2026, and to run a meeting in Portuguese by the end of the year."),
    ]),
    dict(title="Year in review 2025", group="Sport and hobbies", aliases=["2025 review"], tags=["review"], text=[
        ("", "Written on 31 December 2025, on the sofa, with the last of the kimchi."),
        ("Work", "A year of finishing things: the Kafka migration, the storage move, the driver app rewrite, the region move, the billing cut-over. The [[Projects/Halyard|Halyard]] GA slipped twice, which hurt. The March alarm incident was the worst week of my working year, and the post-mortem the best thing the team did. See [[Decision log]] for everything we decided."),
        ("Life", "- Travel: [[Porto weekend 2025]], [[Lofoten trip 2025]], [[Kyoto trip 2025]].\n- Sport: first 6a bouldering, a finger injury, and the start of a [[Running plan#The plan|marathon plan]].\n- Cooking: ramen broth, seven batches of kimchi, and far too much sourdough.\n- Found a new apartment, moving in January."),
        ("For 2026", "Run the marathon in under 3:45. Pass the Portuguese A2 exam. Read fewer management books and more novels. Keep this journal going."),
    ]),
]


def register(ctx):
    for item in LIFE:
        ctx.add("Life", item["title"], "life", aliases=item["aliases"]).data = item


def write(ctx):
    for item in LIFE:
        n = ctx.get(item["title"])
        rng = n.rng()
        fm = [("aliases", item["aliases"])]
        if item.get("date"):
            fm.append(("date", item["date"]))
        fm.append(("tags", item["tags"]))
        n.frontmatter = fm
        blocks = []
        if rng.random() < 0.6 or item.get("lang") == "ru":
            blocks.append(f"# {item['title']}")
        for head, body in item["text"]:
            blocks.append(f"## {head}\n\n{body}" if head else body)
        n.body = sections(blocks)
