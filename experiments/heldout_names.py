"""How many names, places and companies survive, on messages no recogniser was tuned to (issue 35).

    python -m experiments.heldout_names [--set a|b] [--customers 140] [--seed 35] [--epsilon 8]
    python -m experiments.heldout_names --vader

A generator of its own, kept apart from :mod:`textdp.datasets.tickets` and from the tests'
sentences: other templates (chat messages, forwarded notes, sign-offs on their own line), lower
case and NFD text, names of many origins including names that are English words (Rose, Will,
Mark, Hope, Baker), third parties ("my colleague …"), names in e-mail addresses and user names,
cities in lower case, companies with their legal form. Each customer writes about three
messages; every inserted value is recorded.

Scored at MVC ε = 8 with the defaults (``oov="mask"``, identifiers and entities on) and with the
entity stage alone (ε = 10⁶, ``oov="keep"``: the mechanism returns every word, so what survives
is what the stage missed). A value **survives** in a message when its key form
(:func:`textdp.text.fold.key_string`) appears as whole words in the key form of the output;
a customer keeps the **full name** when one of their outputs holds their first name and their
surname. Run it against another checkout by putting its ``src`` first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import json
import re
import unicodedata
from typing import Any

import numpy as np

from experiments import _harness as harness

NAME = "heldout_names"

FIRST = (  # many origins; the second group are also English words
    "Zanele", "Thandiwe", "Sipho", "Chiamaka", "Emeka", "Abena", "Kofi", "Yaw", "Aisha",
    "Tariq", "Samira", "Karim", "Nasrin", "Reza", "Dariush", "Anjali", "Vikram", "Deepika",
    "Sunil", "Kavya", "Ravi", "Meera", "Xiu", "Jun", "Lan", "Hao", "Yuna", "Sakura", "Kenji",
    "Seo-yeon", "Hyun", "Minh", "Linh", "Tuan", "Ayelet", "Noa", "Yosef", "Bogdan", "Irina",
    "Pavel", "Marta", "Tomasz", "Agnieszka", "Lena", "Henrik", "Astrid", "Sven", "Leila",
    "Ines", "Rafael", "Paola", "Diego", "Valentina", "Joaquim", "Marcelo", "Chiara", "Lorenzo",
    "Margaux", "Baptiste", "Bram", "Femke", "Owen", "Caitlin", "Declan", "Rhys", "Megan",
    "Tyler", "Brittany", "Kayla", "Malik", "Keisha",
    "Rose", "Will", "Mark", "Hope", "Grace", "Faith", "Joy", "Iris", "Daisy", "Ruby", "Jack",
    "Bill", "Frank", "Dawn", "April", "Summer", "Hunter", "Chase", "Skye", "Ivy",
)
LAST = (
    "Kim", "Dlamini", "Nkosi", "Okonkwo", "Eze", "Mensah", "Boateng", "Rahman", "Hussain",
    "Farouk", "Haidari", "Moradi", "Patel", "Gupta", "Nair", "Menon", "Krishnan", "Chen",
    "Huang", "Lin", "Zhou", "Sato", "Kobayashi", "Yamamoto", "Park", "Choi", "Tran", "Pham",
    "Cohen", "Levi", "Petrov", "Ivanova", "Kovalenko", "Novak", "Dvorak", "Horvat", "Lewandowski",
    "Zielinska", "Nilsson", "Andersen", "Virtanen", "Santos", "Pereira", "Costa", "Ramirez",
    "Torres", "Romero", "Ricci", "Marino", "Greco", "Lambert", "Girard", "Peeters", "Visser",
    "Murphy", "Kelly", "Byrne", "Evans", "Jenkins", "Jackson", "Robinson", "Washington",
    "Baker", "Cook", "Hunt", "Bell", "Wood", "Stone", "Fox", "Gold", "Little", "Hill", "Rich",
)
CITIES = (
    "Durban", "Lagos", "Accra", "Kumasi", "Nairobi", "Mombasa", "Casablanca", "Tunis", "Amman",
    "Isfahan", "Karachi", "Lahore", "Pune", "Chennai", "Kolkata", "Hyderabad", "Chengdu",
    "Wuhan", "Osaka", "Sapporo", "Busan", "Daegu", "Hanoi", "Da Nang", "Haifa", "Kharkiv",
    "Gdansk", "Wroclaw", "Brno", "Graz", "Malmo", "Aarhus", "Tampere", "Porto", "Braga",
    "Seville", "Valencia", "Bologna", "Turin", "Lyon", "Nantes", "Utrecht", "Antwerp", "Cork",
    "Leeds", "Bristol", "Glasgow", "Cardiff", "Denver", "Austin", "Tucson", "Calgary", "Halifax",
    "Curitiba", "Recife", "Medellin", "Rosario", "Valparaiso", "Auckland", "Perth",
)
COMPANIES = (
    ("Brightwave", "Ltd"), ("Kestrel Analytics", "GmbH"), ("Nordlys", "AS"), ("Tecnova", "S.A."),
    ("Orchid Logistics", "LLC"), ("Saffron Foods", "Inc"), ("Blue Heron Media", "Pty Ltd"),
    ("Vantor", "BV"), ("Mirabel", "SARL"), ("Quillon", "S.r.l."), ("Hanse Metall", "AG"),
    ("Zephyr Labs", "Inc."), ("Polaris Freight", "Ltd."), ("Granite Peak", "LLP"),
    ("Larkspur", "plc"), ("Tidewater Partners", "LP"), ("Kowa Seisakusho", "KK"),
    ("Sunbeam Textiles", "Pvt Ltd"), ("Drava", "d.o.o."), ("Wisla Budownictwo", "Sp. z o.o."),
)
RELATIONS = ("colleague", "manager", "son", "daughter", "wife", "husband", "flatmate",
             "assistant", "boss", "brother")

TEMPLATES = (
    "hey, {first} here. my parcel still hasn't shown up in {city}, can someone check?",
    "{greet} team,\nthe invoice from {company} is wrong again.\n{signoff},\n{first} {last}",
    "hi there - this is {first} {last} from {city}. the app logs me out every few minutes",
    "my {relation} {tfirst} tried to call you twice yesterday, nobody answered",
    "forwarding this for {tfirst} {tlast} who is on leave. they work at {company}.",
    "can you send the receipt to {email}? cheers {first}",
    "user {username} cannot reset the password. we are based in {city}.",
    "thx, {first} {last}",
    "i spoke to {tfirst} on the phone and she said {tfirst} would sort it out",
    "still waiting on a reply. {company} pays on time, you should too.\n-- {first}",
    "{first}'s account was charged twice for the {city} order",
    "please ask {tfirst} {tlast} to ring me back, {first}",
    "we moved to {city} in march, so the delivery address changed. regards {first} {last}",
    "dear support, {initial}. {last} here, my card was declined",
    "{first} {last}\nsent from my phone",
)
# Set B: written after the rules were revised on set A's misses, and scored once, untouched.
FIRST_B = (
    "Nomvula", "Lwazi", "Folake", "Tunde", "Efua", "Kwabena", "Yasmin", "Hamza", "Rania",
    "Bilal", "Parisa", "Kian", "Ishaan", "Nandini", "Harpreet", "Sanjay", "Divya", "Meng",
    "Jing", "Ying", "Takumi", "Aoi", "Ren", "Soo-ah", "Jae-won", "Quynh", "Phuong", "Tamar",
    "Eitan", "Oksana", "Yuri", "Dorota", "Krzysztof", "Jiri", "Sanna", "Eero", "Freja",
    "Bjorn", "Soraya", "Gonzalo", "Ximena", "Rodrigo", "Graziella", "Matthias", "Annika",
    "Colm", "Niamh", "Gareth", "Bethany", "Dwayne", "Latoya", "Jasmine", "Shane",
    "Amber", "Crystal", "Holly", "Heather", "Pearl", "Violet", "Penny", "Sandy", "Autumn",
    "Rocky", "Sonny", "Dusty", "Robin", "Carol", "Art", "Drew", "Cliff", "Miles", "Sterling",
)
LAST_B = (
    "Mokoena", "Ndlovu", "Adeyemi", "Okoro", "Asante", "Owusu", "Siddiqui", "Qureshi", "Khalil",
    "Sadeghi", "Rostami", "Banerjee", "Desai", "Kapoor", "Pillai", "Wu", "Xu", "Guo", "Nakamura",
    "Inoue", "Yoon", "Kang", "Le", "Vu", "Friedman", "Mizrahi", "Shevchenko", "Bondarenko",
    "Kaminski", "Wojcik", "Prochazka", "Korhonen", "Lindberg", "Halvorsen", "Alvarez", "Moreno",
    "Castillo", "Ferrari", "Colombo", "Fontaine", "Mercier", "Janssens", "De Jong", "Brennan",
    "Gallagher", "Hughes", "Price", "Coleman", "Brooks", "Sanders",
    "Young", "King", "Wright", "Green", "Hall", "Ward", "Brown", "White", "Rivers", "Lane",
    "Street", "Gates", "Banks", "Mills", "Sharp", "Strong", "Moody",
)
CITIES_B = (
    "Pretoria", "Ibadan", "Tamale", "Dodoma", "Kampala", "Marrakesh", "Sfax", "Irbid", "Tabriz",
    "Peshawar", "Nagpur", "Kochi", "Mysore", "Guangzhou", "Nanjing", "Kyoto", "Fukuoka",
    "Incheon", "Hue", "Eilat", "Odesa", "Lviv", "Poznan", "Ostrava", "Linz", "Uppsala",
    "Bergen", "Oulu", "Coimbra", "Bilbao", "Zaragoza", "Genoa", "Verona", "Toulouse",
    "Rennes", "Ghent", "Galway", "Sheffield", "Swansea", "Omaha", "Boise", "Spokane",
    "Winnipeg", "Regina", "Manaus", "Cali", "Cordoba", "Arequipa", "Hamilton", "Darwin",
)
COMPANIES_B = (
    ("Ferncliff", "Ltd"), ("Adlerhorst Technik", "GmbH"), ("Fjordkraft Data", "AS"),
    ("Solaria Iberica", "S.L."), ("Bluebell Dairy", "LLC"), ("Cobalt Ridge", "Inc"),
    ("Wattle Creek", "Pty Ltd"), ("Dijkstra Bouw", "B.V."), ("Maison Verlaine", "SAS"),
    ("Ortofrutta", "S.p.A."), ("Rheinwerk", "KG"), ("Nimbus Systems", "Corp"),
    ("Thistle Insurance", "plc"), ("Harbourside Legal", "LLP"), ("Sakura Denki", "K.K."),
    ("Pratham Exports", "Pvt. Ltd."), ("Jadran Tours", "d.o.o."), ("Karpaty Trans", "Sp. z o.o."),
)
TEMPLATES_B = (
    "{first} {last} again - still no refund for the {city} booking",
    "to whom it may concern, my neighbour {tfirst} {tlast} recommended you. {first}",
    "ok so {tfirst} from accounts says the {company} invoice was paid??",
    "morning! it's {first}. can i change the delivery to {city}",
    "cc {tfirst} {tlast}\nplease update the billing contact to {email}",
    "account holder: {first} {last}, {city}",
    "my daughter {tfirst} set this up for me, i dont know the password",
    "this is the third time i write. {company} will hear about this. - {first} {last}",
    "login {username} is locked, please help",
    "ta, {first}",
    "talked with {tfirst} yesterday, {tfirst} promised a callback that never came",
    "{last}, {first} ({city})",
    "our supplier {company} in {city} confirmed the shipment",
    "best wishes from {city}!\n{first}",
    "Mr {last} wants a copy of the contract. {first} {last}",
)

# Set C: written on 2026-11-28 (session 10) before any rule of that session changed; main scored
# on it then, and its messages never read — only its totals.
FIRST_C = (
    "Thabo", "Lindiwe", "Ngozi", "Chidi", "Adwoa", "Kojo", "Fatima", "Omar", "Layla", "Youssef",
    "Shirin", "Arash", "Priya", "Rohan", "Aarav", "Lakshmi", "Wei", "Fang", "Haruto", "Yui",
    "Min-jun", "Ji-ho", "Thanh", "Hoa", "Avi", "Shira", "Dmitri", "Natasha", "Katarzyna",
    "Piotr", "Ondrej", "Lucie", "Mikko", "Ingrid", "Lars", "Sigrid", "Camila", "Mateo", "Lucia",
    "Alejandro", "Giulia", "Matteo", "Elodie", "Thibault", "Sanne", "Daan", "Siobhan", "Cormac",
    "Dylan", "Carys", "Brandon", "Tiffany", "Jamal", "Shanice",
    "Cherry", "Honey", "Sky", "Brook", "Jade", "Coral", "Willow", "Hazel", "Poppy", "Lily",
    "Melody", "Angel", "Pat", "Rob", "Sue", "Nick", "Gene", "Guy", "Lance", "Grant", "Dean",
    "Glen", "Rusty", "Forest", "Storm",
)
LAST_C = (
    "Zulu", "Mthembu", "Obi", "Nwosu", "Appiah", "Darko", "Karimi", "Hosseini", "Malik",
    "Chaudhry", "Iyer", "Reddy", "Joshi", "Liu", "Zhang", "Yang", "Tanaka", "Suzuki",
    "Watanabe", "Lee", "Jung", "Nguyen", "Hoang", "Katz", "Shapiro", "Sokolov", "Popescu",
    "Nowak", "Kowalczyk", "Svoboda", "Lindqvist", "Johansson", "Hansen", "Laine", "Fernandes",
    "Oliveira", "Gomez", "Herrera", "Bianchi", "Esposito", "Dubois", "Moreau", "Dekker", "Maes",
    "O'Brien", "McCarthy", "Walsh", "Jones", "Davies", "Thompson", "Harris", "Carter",
    "Mitchell", "Bird", "Fisher", "Carpenter", "Butcher", "Mason", "Shepherd", "Marsh", "Field",
    "Frost", "Snow", "Long", "Short", "Sweet", "Good", "Love", "Church", "Bridge", "Rice",
)
CITIES_C = (
    "Bulawayo", "Abuja", "Kigali", "Addis Ababa", "Alexandria", "Rabat", "Beirut", "Shiraz",
    "Mashhad", "Faisalabad", "Jaipur", "Surat", "Xiamen", "Harbin", "Nagoya", "Sendai",
    "Gwangju", "Haiphong", "Tel Aviv", "Dnipro", "Krakow", "Katowice", "Plzen", "Salzburg",
    "Gothenburg", "Stavanger", "Espoo", "Faro", "Malaga", "Granada", "Naples", "Florence",
    "Marseille", "Bordeaux", "Eindhoven", "Bruges", "Limerick", "Liverpool", "Nottingham",
    "Aberdeen", "Phoenix", "Portland", "Memphis", "Ottawa", "Quebec", "Belo Horizonte",
    "Porto Alegre", "Cartagena", "Mendoza", "Wellington", "Adelaide", "Nice", "Bath",
)
COMPANIES_C = (
    ("Larchmont", "Ltd"), ("Silberfluss Software", "GmbH"), ("Havbris", "ASA"),
    ("Aurora Boreal", "S.A."), ("Redwood Dental", "LLC"), ("Juniper Grove", "Inc."),
    ("Kookaburra Freight", "Pty. Ltd."), ("Van Houten Installatie", "B.V."),
    ("Atelier Beaumont", "SARL"), ("Cantina Sole", "S.r.l."), ("Bergmann Stahl", "AG"),
    ("Quartzline", "Corp."), ("Ashgrove", "PLC"), ("Meridian Tax", "LLP"),
    ("Tanuki Shoji", "K.K."), ("Gangotri Textiles", "Pvt Ltd"), ("Sava Promet", "d.o.o."),
    ("Mazury Drewno", "sp. z o.o."), ("Nordvik", "AB"), ("Kahlo Disenos", "S.A. de C.V."),
)
TEMPLATES_C = (
    "{first} from {company} here, the last shipment to {city} arrived broken",
    "yo it's {first}, my {relation} {tfirst} said you could help",
    "Sincerely,\n{first} {last}\n{city}",
    "got a msg from {tfirst}.{tlast}@gmail.com claiming to be from your team?",
    "pls reply to {email} asap - {first}",
    "{first} {last} ({username}) can't log in since tuesday",
    "@{username} thanks for the quick fix!",
    "my {relation}, {tfirst}, uses the same card",
    "spoke with {tfirst} {tlast} at your {city} branch, she was lovely",
    "{first}: the {company} account is still suspended",
    "this is {initial}. {last} of {company}, re: the contract renewal",
    "I'm {first} {last} and I live in {city}",
    "{last} here. tried calling from {city} but the line was dead",
    "thanks so much {tfirst}!! you're a star",
    "signed, {first} {last}",
    "my name is {first} and my {relation} is {tfirst} {tlast}",
    "best,\n{first}",
    "any update?? {first} {last}, {city}",
)

# Set D: written on 2026-11-28 at 16:58 UTC, after set C had been scored and before its messages
# were read (C then became a set the rules were revised on); never read: only its totals.
FIRST_D = (
    "Sibusiso", "Nokuthula", "Obinna", "Adaeze", "Kwame", "Esi", "Mariam", "Yusuf", "Nour",
    "Hadi", "Farzaneh", "Babak", "Aditya", "Pooja", "Arjun", "Sneha", "Xin", "Bo", "Mei",
    "Daiki", "Hana", "Jisoo", "Dong-hyun", "Trang", "Duc", "Noam", "Yael", "Alexei", "Svetlana",
    "Marek", "Zuzana", "Kasia", "Tereza", "Aino", "Leif", "Maja", "Nils", "Catalina", "Joaquin",
    "Mariana", "Federico", "Francesca", "Aurelien", "Camille", "Joost", "Lotte", "Aoife",
    "Padraig", "Ffion", "Jordan", "Destiny", "Darnell", "Tamika", "Kyle",
    "Sunny", "Misty", "Candy", "Crystal", "Ginger", "Olive", "Rosemary", "Sage", "Fern", "Wren",
    "Clay", "Wade", "Reed", "Cole", "Heath", "Ray", "Don", "Al", "Max", "Earl", "Duke",
)
LAST_D = (
    "Khumalo", "Sithole", "Okafor", "Chukwu", "Agyeman", "Ansah", "Haddad", "Saleh", "Mansour",
    "Tehrani", "Ahmadi", "Rao", "Agarwal", "Bhatt", "Sharma", "Wang", "Zhao", "Sun", "Ito",
    "Kato", "Yoshida", "Han", "Lim", "Do", "Bui", "Levy", "Ben-David", "Volkov", "Morozov",
    "Kowalski", "Dvorakova", "Hakala", "Berg", "Lund", "Jensen", "Medina", "Vargas", "Rojas",
    "Conti", "Rinaldi", "Lefebvre", "Roux", "Bakker", "De Vries", "O'Connor", "Quinn", "Lloyd",
    "Powell", "Foster", "Reynolds", "Butler", "Russell",
    "Wolf", "Lamb", "Swan", "Crane", "Parish", "Chapel", "Temple", "Castle", "Bishop", "Sterling",
    "Golden", "Black", "Gray", "Page", "Ball", "Cross", "Dale", "Nash", "Power", "Hardy", "Day",
)
CITIES_D = (
    "Harare", "Port Harcourt", "Kisumu", "Arusha", "Fez", "Sousse", "Aqaba", "Kermanshah",
    "Multan", "Quetta", "Lucknow", "Indore", "Vadodara", "Hangzhou", "Qingdao", "Kobe",
    "Hiroshima", "Ulsan", "Hai Phong", "Nazareth", "Lviv", "Lodz", "Lublin", "Olomouc",
    "Innsbruck", "Linkoping", "Trondheim", "Turku", "Aveiro", "Cadiz", "Murcia", "Palermo",
    "Trieste", "Montpellier", "Dijon", "Groningen", "Leuven", "Waterford", "Plymouth", "Leicester",
    "Inverness", "Fresno", "Tulsa", "Savannah", "Halifax", "Saskatoon", "Fortaleza", "Florianopolis",
    "Barranquilla", "Salta", "Christchurch", "Hobart", "Split", "Mobile", "Orange",
)
COMPANIES_D = (
    ("Mossgiel", "Ltd"), ("Weidenhof Elektro", "GmbH"), ("Skarvik Marine", "AS"),
    ("Costa Brava Vinos", "S.L."), ("Ironbark Roofing", "LLC"), ("Heliotrope", "Inc"),
    ("Billabong Transport", "Pty Ltd"), ("Zonnebloem", "B.V."), ("Caprice Mode", "SAS"),
    ("Frantoio Verde", "S.p.A."), ("Nordwerk", "KG"), ("Arcturus Data", "Corp"),
    ("Kelpie Insurance", "plc"), ("Quayside Accountants", "LLP"), ("Hikari Seiki", "K.K."),
    ("Shakti Polymers", "Pvt. Ltd."), ("Triglav Gradnja", "d.o.o."), ("Tatry Meble", "Sp. z o.o."),
)
TEMPLATES_D = (
    "hiya, {first} {last} here - the {company} order never left {city}",
    "Dear team, I am writing on behalf of my {relation} {tfirst}. Regards, {first}",
    "{first}\n{city}\n\nwhy was i charged twice?",
    "fwd from {tfirst} {tlast}: the courier in {city} lost it again",
    "mail me at {email} pls, {first} {last}",
    "the account {username} belongs to {tfirst} {tlast}, not to me",
    "{tfirst} said {company} would refund us. did they?",
    "cheers for sorting it, {tfirst}!",
    "Name: {first} {last}\nCity: {city}\nIssue: app crashes",
    "i think {tfirst} {tlast} from your {city} office already knows about this",
    "sorry it's {first} again, the {company} invoice is still wrong",
    "{first} {last} ({city}) - refund please",
    "please don't call {tfirst} at home, call me. {first}",
    "we ({company}, {city}) have not received the goods",
    "Best regards\n{first}",
    "hey {tfirst}, tell {tfirst} {tlast} the package arrived",
)


def _sets(name: str) -> tuple[tuple[str, ...], ...]:
    if name == "b":
        return FIRST_B, LAST_B, CITIES_B, COMPANIES_B, TEMPLATES_B
    if name == "c":
        return FIRST_C, LAST_C, CITIES_C, COMPANIES_C, TEMPLATES_C
    if name == "d":
        return FIRST_D, LAST_D, CITIES_D, COMPANIES_D, TEMPLATES_D
    return FIRST, LAST, CITIES, COMPANIES, TEMPLATES


GREETS = ("hello", "hi", "dear", "good morning")
#: A name is also an ordinary English word when its Zipf frequency is at least this (Rose 4.8,
#: Will 6.5, Baker 4.3, Amber 4.2; not Zanele, Okafor).
WORDLIKE_ZIPF = 4.0
SIGNOFFS = ("best", "kind regards", "thanks", "cheers", "many thanks")


def _style(text: str, rng: np.random.Generator) -> str:
    """Lower case half of the time; NFD a fifth of the time."""
    if rng.random() < 0.5:
        text = text.lower()
    if rng.random() < 0.2:
        text = unicodedata.normalize("NFD", text)
    return text


def generate(customers: int, seed: int, which: str = "a") -> list[dict[str, Any]]:
    """Messages with the values inserted in each (by kind), from set ``a`` or ``b``."""
    FIRST, LAST, CITIES, COMPANIES, TEMPLATES = _sets(which)  # noqa: N806
    rng = harness.rng(seed, 0)
    pick = lambda pool: pool[int(rng.integers(len(pool)))]  # noqa: E731
    out = []
    for c in range(customers):
        first, last, city = pick(FIRST), pick(LAST), pick(CITIES)
        name, form = pick(COMPANIES)
        for _ in range(3):
            t = pick(TEMPLATES)
            tfirst, tlast = pick(FIRST), pick(LAST)
            sep = pick((".", "_", ""))
            fields = {
                "first": first, "last": last, "city": city, "company": f"{name} {form}",
                "tfirst": tfirst, "tlast": tlast, "relation": pick(RELATIONS),
                "greet": pick(GREETS), "signoff": pick(SIGNOFFS), "initial": first[0],
                "email": f"{first.lower()}{sep}{last.lower()}@example.com",
                "username": f"{first.lower()}_{last.lower()}{int(rng.integers(10, 99))}",
            }
            text = _style(t.format(**fields), rng)
            values: dict[str, list[str]] = {"first": [], "last": [], "city": [], "company": []}
            if "{first}" in t:
                values["first"].append(first)
            if "{last}" in t:
                values["last"].append(last)
            if "{tfirst}" in t:
                values["first"].append(tfirst)
            if "{tlast}" in t:
                values["last"].append(tlast)
            if "{city}" in t:
                values["city"].append(city)
            if "{company}" in t:
                values["company"].append(name)  # the name, without its legal form
            out.append({"customer": c, "text": text, "values": values,
                        "full": [first, last] if "{first} {last}" in t else [],
                        "own": [first, last]})
    return out


def _present(value: str, key_text: str) -> bool:
    from textdp.text.fold import key_string

    return re.search(rf"(?<!\w){re.escape(key_string(value))}(?!\w)", key_text) is not None


def score(messages: list[dict[str, Any]], outputs: list[str]) -> dict[str, Any]:
    from textdp.text._zipf import zipf_frequency
    from textdp.text.fold import key_string

    kinds = ("first", "last", "city", "company")
    counts = {k: [0, 0] for k in (*kinds, "names_that_are_words", "other_names")}
    full: set[int] = set()
    for m, out in zip(messages, outputs, strict=True):
        key = key_string(out)
        for k in kinds:
            for v in m["values"][k]:
                counts[k][1] += 1
                counts[k][0] += (hit := _present(v, key))
                if k in ("first", "last"):  # "Will Smith" against "Will you": see --vader
                    word = zipf_frequency(key_string(v)) >= WORDLIKE_ZIPF
                    split = counts["names_that_are_words" if word else "other_names"]
                    split[1] += 1
                    split[0] += hit
        first, last = m["own"]
        if _present(first, key) and _present(last, key):
            full.add(m["customer"])
    return {"survived": {k: {"survived": s, "inserted": n, "rate": s / n if n else None}
                         for k, (s, n) in counts.items()},
            "customers_with_full_name": len(full),
            "customers": len({m["customer"] for m in messages})}


def run(customers: int, seed: int, epsilon: float, which: str = "a") -> dict[str, Any]:
    import textdp
    from textdp.release import privatize

    messages = generate(customers, seed, which)
    texts = [m["text"] for m in messages]
    default = privatize(texts, "mvc", epsilon=epsilon, seed=seed)
    alone = privatize(texts, "mvc", epsilon=1e6, seed=seed, oov="keep")
    return {"textdp": textdp.__file__, "set": which, "messages": len(texts), "epsilon": epsilon,
            "mvc_defaults": score(messages, list(default.texts)),
            "stage_alone": score(messages, list(alone.texts)),
            "examples": [[t, o] for t, o in zip(texts[:12], list(alone.texts)[:12], strict=True)]}


def vader_false_masking(limit: int | None = None) -> dict[str, Any]:
    """What the gazetteer recognisers mask on the VADER sentences (tweets, movie reviews, Amazon
    reviews, New York Times: 7,400 sentences of ordinary English, with some real names) that the
    NER model does not: an upper bound on their false masking, as a share of the words and of the
    sentences, with every such word listed for reading."""
    from textdp.datasets import load_vader
    from textdp.text.fold import fold_string
    from textdp.text.gazetteers import gazetteer_spans
    from textdp.text.recognisers.ner import NER

    texts = [fold_string(s.text) for name in ("tweets", "movie_reviews", "amazon", "nyt")
             for s in load_vader(name)][:limit]
    ner = NER().find(texts)  # the model's own spans (no gazetteer)
    from textdp.text._zipf import zipf_frequency
    from textdp.text.names import _lexicon
    from textdp.text.stopwords import ENGLISH_STOPWORDS

    names = _lexicon()
    words = extra_words = extra_sentences = 0
    wordlike = wordlike_masked = 0  # occurrences of names that are words ("Will you")
    listed = []
    for text, spans in zip(texts, ner, strict=True):
        words += len(re.findall(r"\w+", text))
        covered = [False] * (len(text) + 1)
        for a, b, _ in spans:
            covered[a:b] = [True] * (b - a)
        extra = [(a, b, k) for a, b, k in gazetteer_spans(text, ("person", "location", "org"))
                 if not any(covered[a:b])]
        masked = [False] * (len(text) + 1)
        for a, b, k in extra:
            if k == "person":
                masked[a:b] = [True] * (b - a)
        for m in re.finditer(r"[^\W\d_]+", text):
            w = m.group().lower()
            if (len(w) > 1 and w not in ENGLISH_STOPWORDS and names.get(w)
                    and zipf_frequency(w) >= WORDLIKE_ZIPF and not covered[m.start()]):
                wordlike += 1
                wordlike_masked += masked[m.start()]
        if extra:
            extra_sentences += 1
            for a, b, k in extra:
                extra_words += len(re.findall(r"\w+", text[a:b]))
                listed.append(f"{k}: {text[a:b]!r} in {text[max(0, a - 30):b + 30]!r}")
    return {"sentences": len(texts), "words": words, "extra_words": extra_words,
            "extra_word_rate": extra_words / words, "extra_sentences": extra_sentences,
            "extra_sentence_rate": extra_sentences / len(texts),
            "names_that_are_words": {"occurrences": wordlike, "masked_as_person": wordlike_masked,
                                     "rate": wordlike_masked / wordlike if wordlike else None},
            "listed": listed}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--customers", type=int, default=140)
    p.add_argument("--seed", type=int, default=35)
    p.add_argument("--epsilon", type=float, default=8.0)
    p.add_argument("--out", default=None)
    p.add_argument("--set", choices=("a", "b", "c", "d"), default="a", dest="which")
    p.add_argument("--vader", action="store_true",
                   help="instead: the gazetteers' extra masks on the VADER sentences")
    a = p.parse_args(argv)
    results = (vader_false_masking() if a.vader
               else run(a.customers, a.seed, a.epsilon, a.which))
    text = json.dumps(results, indent=1, ensure_ascii=False)
    if a.out:
        harness.write_text(harness.Path(a.out), text)
    print(text)


if __name__ == "__main__":
    main()
