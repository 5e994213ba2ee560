"""Realistic customer-support tickets with known customers, for measuring what leaks.

Each ticket is written by a customer with a first and last name drawn from a diverse,
multilingual pool, and mentions some of: their e-mail address, phone number, order number,
street address and city, and the issue. Every inserted value is kept with its character
offsets (:class:`Ticket`), so a measurement knows exactly which names, streets and numbers
should not survive privatisation. Generated from a seed (:func:`generate_tickets`), offline;
all names, addresses and numbers are made up by the generator (phone numbers use the ranges
reserved for fiction or drama where a country has one, e.g. 555-01xx, +44 20 7946 0xxx).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textdp._random import public_python_random

__all__ = ["Ticket", "generate_tickets", "FIRST_NAMES", "LAST_NAMES", "CITIES", "ISSUES"]

FIRST_NAMES = (
    # English, Spanish/Portuguese, German, French, Italian, Dutch, Nordic, Polish, Turkish,
    # Arabic, Persian, Hindi/Tamil/Bengali, Chinese, Japanese, Korean, Vietnamese, Yoruba/Igbo,
    # Swahili, Russian/Ukrainian, Greek.
    "Emily", "James", "Olivia", "Daniel", "Hannah", "Michael", "Sophie", "Thomas", "María",
    "José", "Lucía", "Alejandro", "Camila", "João", "Beatriz", "Lukas", "Anneliese", "Jürgen",
    "Friederike", "Amélie", "Guillaume", "Élodie", "Giulia", "Matteo", "Francesca", "Daan",
    "Sanne", "Freya", "Magnus", "Ingrid", "Katarzyna", "Wojciech", "Zeynep", "Mehmet", "Elif",
    "Fatima", "Omar", "Layla", "Youssef", "Darius", "Shirin", "Priya", "Arjun", "Lakshmi",
    "Rohan", "Ananya", "Wei", "Xiaoming", "Mei", "Hiroshi", "Yuki", "Haruto", "Ji-woo",
    "Min-jun", "Thanh", "Nguyet", "Chidi", "Ngozi", "Oluwaseun", "Adebayo", "Amani", "Baraka",
    "Svetlana", "Dmytro", "Olena", "Nikos", "Eleni", "Siobhan", "Aoife", "Kwame",
)
LAST_NAMES = (
    "Thompson", "Harrington", "Whitaker", "O'Brien", "McAllister", "García", "Fernández",
    "Rodríguez", "Oliveira", "Carvalho", "Müller", "Schmidt", "Hoffmann", "Zimmermann",
    "Dubois", "Lefebvre", "Moreau", "Rossi", "Bianchi", "Esposito", "de Vries", "Jansen",
    "Bakker", "Lindqvist", "Johansson", "Kowalski", "Wiśniewska", "Nowak", "Yılmaz", "Demir",
    "Öztürk", "Haddad", "Al-Masri", "Benali", "Tehrani", "Karimi", "Sharma", "Iyer",
    "Chatterjee", "Reddy", "Wang", "Zhang", "Liu", "Tanaka", "Suzuki", "Watanabe", "Kim",
    "Park", "Choi", "Nguyen", "Tran", "Okafor", "Adeyemi", "Okonkwo", "Mwangi", "Odhiambo",
    "Ivanova", "Kovalenko", "Shevchenko", "Papadopoulos", "Georgiou", "Gallagher", "Mensah",
)
# (city, country code) — the street formats below are the country's own.
CITIES = (
    ("Portland", "us"), ("Sacramento", "us"), ("Milwaukee", "us"), ("Albuquerque", "us"),
    ("Manchester", "uk"), ("Leeds", "uk"), ("Bristol", "uk"), ("Edinburgh", "uk"),
    ("Hamburg", "de"), ("Leipzig", "de"), ("Stuttgart", "de"), ("Freiburg", "de"),
    ("Lyon", "fr"), ("Toulouse", "fr"), ("Bordeaux", "fr"), ("Valencia", "es"),
    ("Zaragoza", "es"), ("Sevilla", "es"), ("Bologna", "it"), ("Torino", "it"),
    ("Utrecht", "nl"), ("Eindhoven", "nl"), ("Porto", "pt"), ("Coimbra", "pt"),
    ("Kraków", "pl"), ("Gdańsk", "pl"), ("Toronto", "ca"), ("Melbourne", "au"),
    ("Dublin", "ie"), ("Göteborg", "se"),
)
_STREET_NAMES = ("Maple", "Oakwood", "Willow", "Chestnut", "Harbour", "Kingfisher", "Juniper",
                 "Ashford", "Linden", "Bramble")
_STREETS = {
    # (template, the street's distinctive name the measurement looks for)
    "us": ("{n} {name} {kind}", ("Street", "Avenue", "Road", "Lane", "Drive")),
    "ca": ("{n} {name} {kind}", ("Street", "Avenue", "Road")),
    "au": ("{n} {name} {kind}", ("Street", "Road", "Parade")),
    "uk": ("{n} {name} {kind}", ("Road", "Street", "Lane", "Close", "Gardens")),
    "ie": ("{n} {name} {kind}", ("Road", "Street", "Terrace")),
    "de": ("{name}{kind} {n}", ("straße", "weg", "allee")),
    "nl": ("{name}{kind} {n}", ("straat", "laan", "gracht")),
    "se": ("{name}{kind} {n}", ("gatan", "vägen")),
    "fr": ("{n} {kind} {name}", ("rue des", "avenue des", "boulevard des")),
    "es": ("{kind} {name} {n}", ("Calle", "Avenida", "Paseo")),
    "it": ("{kind} {name} {n}", ("Via", "Viale", "Corso")),
    "pt": ("{kind} {name} {n}", ("Rua", "Avenida", "Travessa")),
    "pl": ("{kind} {name} {n}", ("ul.",)),
}
_LOCAL_NAMES = {  # street names that read as the country's own
    "de": ("Linden", "Birken", "Ahorn", "Mühlen", "Rosen", "Kastanien"),
    "nl": ("Linden", "Berken", "Molen", "Rozen", "Kastanje"),
    "se": ("Björk", "Lind", "Kvarn", "Ros", "Ek"),
    "fr": ("Tilleuls", "Lilas", "Acacias", "Peupliers", "Marronniers"),
    "es": ("Alcalá", "Olivos", "Castaños", "Almendros", "Cervantes"),
    "it": ("Garibaldi", "Mazzini", "Cavour", "Verdi", "Castagni"),
    "pt": ("Oliveiras", "Castanheiros", "Camões", "Flores", "Almada"),
    "pl": ("Lipowa", "Brzozowa", "Kasztanowa", "Ogrodowa", "Słoneczna"),
}
_PHONES = {
    "us": "({a}) 555-01{b:02d}", "ca": "({a}) 555-01{b:02d}", "uk": "+44 20 7946 0{c:03d}",
    "ie": "+353 1 555 {c:04d}", "au": "+61 2 5550 {c:04d}", "de": "+49 30 555 {c:04d}",
    "nl": "+31 20 555 {c:04d}", "se": "+46 8 555 {c:04d}", "fr": "+33 1 55 55 {b:02d} {b2:02d}",
    "es": "+34 915 55 {b:02d} {b2:02d}", "it": "+39 02 5555 {c:04d}", "pt": "+351 21 555 {c:04d}",
    "pl": "+48 22 555 {b:02d} {b2:02d}",
}
ISSUES = ("late delivery", "damaged item", "refund", "wrong size", "billing error",
          "account locked", "missing parts", "cancel order")
_MAIL_DOMAINS = ("example.com", "example.org", "mail.example.net", "example.co.uk")


@dataclass
class Ticket:
    """One ticket and what it contains: ``values`` maps a kind (``first_name``, ``last_name``,
    ``street``, ``city``, ``email``, ``phone``, ``order``) to the inserted string, ``spans``
    lists ``(start, end, kind)`` of every insertion (``street`` spans cover the whole address
    line, ``street_name`` the street's distinctive name within it)."""

    text: str
    issue: str
    values: dict[str, str] = field(default_factory=dict)
    spans: list[tuple[int, int, str]] = field(default_factory=list)


class _Writer:
    """Appends text pieces and records where the slots went."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.spans: list[tuple[int, int, str]] = []

    def add(self, text: str, kind: str | None = None) -> None:
        if kind is not None:
            self.spans.append((self.size, self.size + len(text), kind))
        self.parts.append(text)
        self.size += len(text)

    def text(self) -> str:
        return "".join(self.parts)


def _customer(rng: Any) -> dict[str, str]:
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    city, country = rng.choice(CITIES)
    template, kinds = _STREETS[country]
    name = rng.choice(_LOCAL_NAMES.get(country, _STREET_NAMES))
    n = str(rng.randint(2, 480))
    street = template.format(n=n, name=name, kind=rng.choice(kinds))
    digits = {"a": rng.choice((212, 312, 415, 503, 617, 720)), "b": rng.randint(0, 99),
              "b2": rng.randint(0, 99), "c": rng.randint(0, 999)}
    local = rng.choice(("{f}.{l}", "{f}{l}", "{f0}{l}", "{f}_{l}{y}"))
    ascii_first = _ascii(first).lower().replace("-", "")
    ascii_last = _ascii(last).lower().replace("'", "").replace(" ", "").replace("-", "")
    email = local.format(f=ascii_first, l=ascii_last, f0=ascii_first[0],
                         y=rng.randint(70, 99)) + "@" + rng.choice(_MAIL_DOMAINS)
    order = rng.choice(("#{d}", "ORD-{d}", "A{d}", "{d}")).format(
        d=rng.randint(10_000_000, 99_999_999))
    return {"first_name": first, "last_name": last, "city": city, "street": street,
            "street_name": name, "email": email, "phone": _PHONES[country].format(**digits),
            "order": order}


def _ascii(text: str) -> str:
    import unicodedata

    folded = unicodedata.normalize("NFKD", text.replace("ł", "l").replace("ı", "i"))
    return "".join(c for c in folded if c.isascii())


# Templates: {first} {last} {city} {street} {email} {phone} {order} {issue} slots.
_OPENINGS = (
    "Hello, my name is {first} {last} and I am writing about {order}. ",
    "Hi, {first} {last} here. ",
    "Dear support team, I ({first} {last}) placed {order} two weeks ago. ",
    "Good morning. This is {first} {last} from {city}. ",
    "Hi there, I'm {first} {last}. ",
)
_BODIES = (
    "The parcel was supposed to go to {street}, {city}, but the tracking page says it was "
    "delivered somewhere else. ",
    "My order {order} arrived today at {street} and the box was crushed, the item inside is "
    "broken. ",
    "I have been charged twice for {order}. I live at {street} in {city} and never received a "
    "second parcel. ",
    "I cannot log in to my account any more; the reset link goes to {email} but never arrives. ",
    "Please cancel {order}. I am moving from {city} next week. ",
    "The courier left a note at {street} but nobody was home. Could you deliver it again? ",
)
# With ``describe_issue=True`` the body is one of these, chosen by the ticket's issue: what a
# customer with that problem writes, in several phrasings, so that the label can be learned
# from the text (the default bodies above are drawn independently of the issue).
_ISSUE_BODIES = {
    "late delivery": (
        "The parcel for {order} arrived two weeks late, long after the promised delivery date. ",
        "My order {order} still has not arrived at {street}; the tracking has said in transit "
        "for ten days. ",
        "The delivery to {city} is very late. I was told three days and it has been almost a "
        "month. ",
        "I am still waiting for {order}. The courier keeps postponing the delivery and nobody "
        "tells me when it will come. ",
        "The package was due last Monday and it is still not here. Why is shipping so slow? ",
    ),
    "damaged item": (
        "The screen was cracked when I opened the box from {order}. ",
        "My order {order} arrived at {street} broken: the glass is shattered and the frame is "
        "bent. ",
        "The lamp came damaged, with a dent in the base and scratches all over. ",
        "When I unpacked the parcel the mug was in pieces; it was not wrapped properly. ",
        "The item is damaged. The box was crushed and the corner of the table is split. ",
    ),
    "refund": (
        "I returned {order} three weeks ago and I still have not received my refund. ",
        "Please refund the money for {order}; I sent the item back from {city} with the "
        "return label. ",
        "I would like my money back. The return was accepted but the refund never reached my "
        "card. ",
        "Where is my refund? You confirmed the return of {order} but my bank shows nothing. ",
        "I want a full refund for this purchase, it was not what was described. ",
    ),
    "wrong size": (
        "The jacket in {order} is far too small; I ordered a large and got a small. ",
        "The shoes do not fit, they are two sizes too big. Can I exchange them for a smaller "
        "size? ",
        "I received the wrong size: the label says medium but I ordered an extra large. ",
        "The trousers are too tight and too short, the size chart must be wrong. ",
        "Could you swap {order} for the next size up? The dress does not fit at all. ",
    ),
    "billing error": (
        "I have been charged twice for {order}. Please correct my invoice. ",
        "My credit card statement shows a payment I never made for {order}. ",
        "The invoice is wrong: I was billed for three items but only bought one. ",
        "You took the payment twice from my account and added a fee I did not agree to. ",
        "The amount charged does not match the price at checkout; the bill is higher than it "
        "should be. ",
    ),
    "account locked": (
        "I cannot log in to my account any more; the reset link goes to {email} but never "
        "arrives. ",
        "My account has been locked after I typed the wrong password, and I cannot sign in. ",
        "The website says my account is blocked. Please unlock it so I can log in again. ",
        "I am locked out of my account and the password reset does not work. ",
        "Every time I try to sign in I get an error that my login is suspended. ",
    ),
    "missing parts": (
        "The bookshelf from {order} came without the screws and one of the shelves is missing. ",
        "Some parts are missing from the box: there is no charger and no cable. ",
        "I opened the package at {street} and half of the pieces were not there. ",
        "The set is incomplete, two of the chairs have no legs and the manual is missing. ",
        "Only one of the three items in {order} was in the parcel; the rest is missing. ",
    ),
    "cancel order": (
        "Please cancel {order} before it ships, I no longer need it. ",
        "I want to cancel my order {order}; I placed it by mistake. ",
        "Could you cancel the order? I am moving from {city} next week and will not be home. ",
        "I changed my mind, please cancel the purchase and do not send anything. ",
        "Cancel {order} please, I found it cheaper elsewhere. ",
    ),
}
_CONTACTS = (
    "You can reach me at {phone} or {email}. ",
    "Call me on {phone} if anything is unclear. ",
    "My e-mail is {email}. ",
    "Phone: {phone}. ",
)
_CLOSINGS = ("Thanks, {first}", "Best regards, {first} {last}", "Kind regards,\n{first} {last}",
             "Cheers, {first}", "{first} {last}\n{street}\n{city}")


def _fill(writer: _Writer, template: str, values: dict[str, str]) -> None:
    slots = {"first": "first_name", "last": "last_name", "city": "city", "street": "street",
             "email": "email", "phone": "phone", "order": "order", "issue": "issue"}
    rest = template
    while rest:
        start = rest.find("{")
        if start < 0:
            writer.add(rest)
            break
        end = rest.index("}", start)
        writer.add(rest[:start])
        kind = slots[rest[start + 1:end]]
        if kind == "street":
            _add_street(writer, values)
        else:
            writer.add(values[kind], kind)
        rest = rest[end + 1:]


def _add_street(writer: _Writer, values: dict[str, str]) -> None:
    street, name = values["street"], values["street_name"]
    at = street.index(name)
    base = writer.size
    writer.add(street, "street")
    writer.spans.append((base + at, base + at + len(name), "street_name"))


def generate_tickets(n: int = 200, *, seed: int = 0, describe_issue: bool = False
                     ) -> list[Ticket]:
    """``n`` tickets from the generator seeded with ``seed`` (the same list for the same
    arguments, on every platform: :class:`random.Random` is specified).

    By default the body is drawn independently of the ticket's ``issue`` (the label cannot be
    learned from the text; pages computed on these tickets rely on this output staying the
    same). With ``describe_issue=True`` the body describes the issue in one of several
    phrasings per issue, so that a classifier can learn the label from the text (a different
    list of tickets from the default one for the same seed)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    rng = public_python_random(seed)
    tickets = []
    for _ in range(n):
        values = _customer(rng)
        issue = rng.choice(ISSUES)
        writer = _Writer()
        bodies = _ISSUE_BODIES[issue] if describe_issue else _BODIES
        for part in (rng.choice(_OPENINGS), rng.choice(bodies), rng.choice(_CONTACTS),
                     rng.choice(_CLOSINGS)):
            _fill(writer, part, {**values, "issue": issue})
        tickets.append(Ticket(text=writer.text(), issue=issue, values=values,
                              spans=writer.spans))
    return tickets
