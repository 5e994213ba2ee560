"""The identifier family: e-mail addresses, URLs, IP addresses, IBANs, card and phone numbers.

Each is a recogniser of the registry (:mod:`textdp.text.recognisers`) registered under its kind:
a **candidate** pattern (a regular expression, case-insensitive) proposes, a maintained
**validator** decides and trims (``validate(window, match) → spans``: the longest valid IBAN or
card number at a group boundary, an address without the dot that ends its sentence).
:class:`textdp.text.identifiers.Identifiers` runs them on the whitespace-delimited stretches
around their anchors (found by numpy), reads the context of phone and IP candidates
(:mod:`textdp.text._context`) and resolves overlaps; on its own, :meth:`Identifier.find` runs a
candidate over a whole document.

=========  =======================================================================================
email      ``local@domain.tld``, the local part plain (letters of any script, digits,
           ``!#$%&'*+/=?^`{|}~-`` and inner dots: ``o'brien@…``) or quoted (``"jo smith"@…``);
           IDN domains (``josé@bücher.de``); a top-level label of ≥ 2 letters or ``xn--…``;
           ``localhost`` or an address literal (``maria@1.2.3.4``, ``maria@[IPv6:…]``); and
           written out (:mod:`textdp.text._spelled`: ``maria at example dot com``,
           ``maria [at] example [dot] com``, ``maria @ example.com``)
url        with a scheme (``http``, ``https``, ``ftp``, ``ftps``, ``sftp``, ``ssh``, ``git``, ``ws``,
           ``wss``, ``file``) and more than one bare word after it (``http://intranet/wiki``,
           not ``http://microsoft``), ``www.`` and a host ending in a top-level domain, or a
           bare or protocol-relative (``//host/…``) domain with an optional port and path
           (``github.com/microsoft/presidio``, ``bit.ly/3xYzAbC``) whose last label is a top-level
           domain of the Public Suffix List (ICANN section, read from the ``publicsuffixlist``
           package's bundled file, never downloaded) — except, without a path, a common file
           extension (``setup.py``, ``notes.md``, ``a.zip``) or a Title-case one (``end.It``);
           trailing ``.,;:!?'"`` and unbalanced closing brackets are not part of it
ip         validated by :mod:`ipaddress`: IPv4 and IPv6 (``::``-compressed, embedded IPv4, zone
           ids ``fe80::1%eth0``), with a CIDR prefix (``10.0.0.0/8``; of an impossible prefix
           such as ``/123`` or ``/9999`` the address alone), a port (``10.0.0.1:8080``)
           or as ``[v6]:port``; a dotted quad right after a colon (``addr:192.168.1.5``, the
           IPv4 tail of an IPv6 address glued to a word); ``::`` alone is not an address here,
           nor are five dotted numbers (``1.3.6.1.4``: an OID or a version)
iban       ISO 13616 by ``python-stdnum`` (country, per-country length and format, mod-97; not its
           bank registry, which lags behind real banks), any
           case, grouped by spaces or dashes or not at all (``gb82 west 1234 5698 7654 32``); the
           longest valid IBAN at a group boundary, so a trailing ``USD`` group is part of it
card       13–19 digits starting with 2–6 (or 15 starting with 1: UATP), passing the Luhn
           check, contiguous or grouped (groups of 3–6 digits, the last 1–6, one separator
           throughout: space, dash or dot)
phone      libphonenumber (``phonenumbers``): numbers in international form, valid
           (``+14155550132``, ``+90 532 123 45 67``), and national numbers valid in one of the
           configured regions (``phone_regions``, default :data:`DEFAULT_PHONE_REGIONS`) and
           grouped as that region writes them, or not grouped (``07911 123456`` in GB,
           ``030 1234567`` in DE), and numbers that start with a configured region's
           country code without its ``+`` (``91-987-654-3210``: read as international);
           dates, versions and coordinates (``15.01.2023``,
           ``10.0.19045.2965``, ``48.8566 2.3522``) are not valid numbers; the digits of an
           IBAN-shaped code that fails its check are not taken for a card or phone number
reference  a phone-shaped number that the words right before it name an order, invoice,
           ticket, tracking, booking, account or reference number (``order no. 07911 123456``,
           ``Invoice 4155550132``; :mod:`textdp.text._context`), and a code of letters and
           digits named by such a word (``ref INV-2231``, ``order #A-77812``; with no such
           word a code is left to the user's recognisers and the number policy): masked as
           ``[REF]``, never released — an order number is as personal as a phone number
=========  =======================================================================================

Patterns and validators load on first use, so importing textdp stays light.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

from textdp.text.fold import fold_string
from textdp.text.recognisers import Recogniser, Span, _register_builtin

__all__ = ["Identifier", "NAMES", "DEFAULT_PHONE_REGIONS", "is_tld"]

#: The built-in identifier recognisers, in their priority order for overlaps.
NAMES = ("email", "url", "ip", "iban", "card", "phone")
#: Regions whose national phone formats are recognised by default (ISO 3166 codes, as
#: libphonenumber): North America, the largest European numbering plans, Turkey, India and
#: Brazil. Numbers written with ``+`` and a country code are recognised whatever the regions.
DEFAULT_PHONE_REGIONS = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "TR", "IN", "BR")

# Candidates (the prefilter). None crosses a line break, so windows joined by "\n" are scanned
# in one pass each and a look-around reads "\n" as it would read the window's real edge.
_LOCAL = r"[\w!#$%&'*+/=?^`{|}~-]"
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_CANDIDATES = {
    # A domain, "localhost", or an address literal: user@1.2.3.4, user@[1.2.3.4],
    # user@[IPv6:2001:db8::1] (RFC 5321 §4.1.3).
    "email": rf"(?<![\w.!#$%&'*+/=?^`{{|}}~\"-])(?:\"[^\"\n\\]{{1,62}}\"|{_LOCAL}+(?:\.{_LOCAL}+)*)"
             rf"@(?:(?:(?:{_LABEL}\.)+(?:[^\W\d_]{{2,63}}|xn--[a-z0-9-]{{1,59}})|localhost)"
             rf"(?![\w@-]|\.[^\W_])|\d{{1,3}}(?:\.\d{{1,3}}){{3}}(?![\w@-]|\.\d)"
             rf"|\[(?:ipv6:)?[0-9a-f:.]+\])",
    "url": rf"(?<![\w.@/:+-])(?:(?P<scheme>(?:https?|ftps?|sftp|ssh|git|wss?|file)://|www\d{{0,3}}\.)"
           rf"[^\s<>\"]+|(?://)?(?P<host>(?:{_LABEL}\.)+[^\W\d_]{{2,63}})(?P<rest>(?::\d{{1,5}})?"
           rf"(?:[/?#][^\s<>\"]*)?)(?![\w@]))",
    "ip": r"(?<![\w:.%/-])(?:\[[0-9a-f:.]+(?:%[\w.-]+)?\](?::\d{1,5})?(?![\w%/-])"
          r"|[0-9a-f:.]*[:.][0-9a-f:.]*(?:%[\w-]+)?(?:/\d{1,5})?(?![\w%/-]))"
          # A dotted quad right after a colon ("inet addr:192.168.1.5", "Mask:255.255.255.0",
          # or the IPv4 tail of an IPv6 address glued to a word, "foo2001:db8::10.0.0.1").
          r"|(?<=:)\d{1,3}(?:\.\d{1,3}){3}"
          r"(?::\d{1,5}|/\d{1,5})?(?![\w%/-]|\.\d)",
    "iban": r"(?<![^\W_])[a-z]{2}\d{2}(?:[ -]?[a-z0-9]){11,32}",
    "card": r"(?<![\w+.,-])\d(?:[ .-]?\d){12,22}",
    "phone": r"(?<![\w+.:/-])(?:\+|\(\+?)?\d[\d ().\-/]{4,24}\d(?!\w)",
}
_TRAILING = ".,;:!?'\""
_CLOSING = {")": "(", "]": "[", "}": "{"}
# Extensions of files that are also top-level domains: ``setup.py`` is a file, not Paraguay.
_FILE_EXTENSIONS = frozenset({"py", "sh", "rs", "md", "zip", "mov", "pl", "pm", "ps", "pt", "ml",
                              "cc", "nc", "cab", "tab", "so", "sc"})

# Extensions of files that are no top-level domain, after an "@": asset names (``logo@2x.png``).
_IMAGE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "tif", "tiff",
                               "ico", "heic", "avif", "pdf", "css", "js", "ts", "json", "txt"})


@cache
def _tlds() -> frozenset[str]:
    """The top-level domains of the Public Suffix List's ICANN section (package's own file)."""
    from importlib.resources import files

    text = files("publicsuffixlist").joinpath("public_suffix_list.dat").read_text("utf-8")
    icann = text.split("// ===END ICANN DOMAINS===")[0]
    out = set()
    for line in icann.splitlines():
        rule = line.strip().lstrip("!*.")
        if rule and not line.startswith("//") and "." not in rule:
            out.add(rule.casefold())
            try:
                out.add(rule.encode("idna").decode("ascii"))
            except UnicodeError:
                pass
    return frozenset(out)


@cache
def _folded_tlds() -> frozenset[str]:
    """The non-ASCII top-level domains as the recognisers read them (textdp.text.fold: "рф" is
    read "pф"); those that fold to ASCII alone are left out (they would match plain words)."""
    out = {fold_string(t).casefold() for t in _tlds() if not t.isascii()}
    return frozenset(t for t in out if not t.isascii())


def _is_tld(label: str) -> bool:
    """Whether a case-folded label of the folded text is a top-level domain."""
    return label in _tlds() or (not label.isascii() and label in _folded_tlds())


def _ends(window: str, start: int, end: int, seps: str) -> list[int]:
    """Ends of prefixes of window[start:end] at a group boundary (a separator or ``end``) with no
    letter or digit right after them, longest first."""
    out = [end] if end >= len(window) or not window[end].isalnum() else []
    out += [p for p in range(end - 1, start, -1) if window[p] in seps]
    return out


def _email(window: str, m: re.Match) -> list[tuple[int, int]]:
    start = m.start()
    local = m.group()[:m.group().rindex("@")]
    while local[:1] in ("'", ".") and not local.startswith('"'):
        local, start = local[1:], start + 1
    if not local or len(local) > 64:
        return []
    last = m.group().rsplit(".", 1)[-1].casefold()
    if last in _IMAGE_EXTENSIONS and not _is_tld(last):
        return []  # "logo@2x.png", "icon@3x.svg": a file at a pixel density, no mailbox
    return [(start, m.end())]


def _url(window: str, m: re.Match) -> list[tuple[int, int]]:
    text = m.group()
    # Trailing punctuation and unbalanced closing brackets belong to the sentence.
    while text:
        last = text[-1]
        if last in _TRAILING or (last in _CLOSING and text.count(_CLOSING[last]) < text.count(last)):
            text = text[:-1]
        else:
            break
    scheme = m.group("scheme")
    if scheme:
        rest = text[len(scheme):]
        host = re.split(r"[/?#:]", rest, maxsplit=1)[0]
        if scheme[:3].lower() == "www":
            # A host name in the DNS: "www.microsoft" ends in no top-level domain.
            if "." not in host or not _is_tld(host.rsplit(".", 1)[1].casefold()):
                return []
        elif rest == host and "." not in host and "@" not in host:
            return []  # "http://microsoft": a scheme before one bare word, nothing to locate
        return [(m.start(), m.start() + len(text))] if rest else []
    host = m.group("host")
    if len(text) < m.end("host") - m.start():
        return []
    tld = host.rsplit(".", 1)[1]
    if not _is_tld(tld.casefold()):
        return []
    has_path = len(text) > m.end("host") - m.start()
    if not has_path and (tld.casefold() in _FILE_EXTENSIONS or tld.istitle() and len(tld) > 1
                         and not tld.isupper()):
        return []
    return [(m.start(), m.start() + len(text))]


def _is_ip(text: str) -> bool:
    import ipaddress

    bracket = re.fullmatch(r"\[([^\]]+)\](?::(\d{1,5}))?", text)
    if bracket:
        host, port = bracket.group(1), bracket.group(2)
        if port is not None and int(port) > 65535:
            return False
        try:
            return isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address)
        except ValueError:
            return False
    if not any(c.isdigit() or c in "abcdefABCDEF" for c in text.split("%")[0]):
        return False  # "::" alone, "...": punctuation, not an address
    address, _, prefix = text.partition("/")
    try:
        if prefix:
            ipaddress.ip_interface(text)
        else:
            ipaddress.ip_address(address)
        return True
    except ValueError:
        pass
    host, _, port = address.rpartition(":")
    if prefix or not port.isdigit() or int(port) > 65535 or ":" in host:
        return False
    try:
        ipaddress.IPv4Address(host)
        return True
    except ValueError:
        return False


def _ip(window: str, m: re.Match) -> list[tuple[int, int]]:
    text = m.group()
    # An address with an impossible prefix length ("10.0.0.0/123") is still an address.
    for candidate in dict.fromkeys((text, text.rstrip("."), text.rstrip(".:"),
                                    text.partition("/")[0])):
        if candidate and _is_ip(candidate):  # "2001:db8::" is one; "10.0.0.1." ends a sentence
            return [(m.start(), m.start() + len(candidate))]
    return []


def _iban(window: str, m: re.Match) -> list[tuple[int, int]]:
    from stdnum import iban

    for end in _ends(window, m.start(), m.end(), " -"):
        compact = re.sub(r"[ -]", "", window[m.start():end])
        # ISO 13616 (country format and mod-97) only: python-stdnum's national checks also
        # look the bank up in its registry, which lags behind real banks (BE68 539…).
        if 15 <= len(compact) <= 34 and _valid_iban(iban, compact.upper()):
            return [(m.start(), end)]
    return []


def _valid_iban(iban: object, number: str) -> bool:
    from stdnum.exceptions import ValidationError

    try:
        iban.validate(number, check_country=False)  # type: ignore[attr-defined]
        return True
    except ValidationError:
        return False


def _card(window: str, m: re.Match) -> list[tuple[int, int]]:
    from stdnum import luhn

    for end in _ends(window, m.start(), m.end(), " .-"):
        text = window[m.start():end]
        groups = re.split(r"[ .-]", text)
        digits = "".join(groups)
        # Issuer numbers start with 2–6 (ISO/IEC 7812), or 1 for the 15 digits of UATP
        # (airline) cards.
        if not 13 <= len(digits) <= 19 or digits[0] not in "23456" and not (
                digits[0] == "1" and len(digits) == 15):
            continue
        if len(groups) > 1 and (len(set(re.findall(r"[ .-]", text))) > 1
                                or any(not 3 <= len(g) <= 6 for g in groups[:-1])
                                or len(groups[-1]) > 6):
            continue
        if luhn.is_valid(digits):
            return [(m.start(), end)]
    return []


def _phone(regions: tuple[str, ...]) -> Callable[[str, re.Match], list[tuple[int, int]]]:
    import phonenumbers

    # Country codes of the configured regions, except North America's "1", which its national
    # numbers already start with (1-800-555-0199).
    codes = tuple(dict.fromkeys(str(c) for r in regions
                                if (c := phonenumbers.country_code_for_region(r)) not in (0, 1)))

    @lru_cache(maxsize=1 << 14)
    def spans(text: str) -> tuple[tuple[int, int], ...]:
        import phonenumbers

        digits = sum(c.isdigit() for c in text)
        if not 7 <= digits <= 17:
            return ()
        international = text.lstrip("(").startswith("+")
        # Every national number of these numbering plans starts with a trunk "0" or an area
        # code in parentheses, or has ≥ 9 digits: "12345678" (an order number) or 2024-03-15
        # need not go through ten regions' metadata, the costly part.
        if not international and not (text[0] in "0(" or digits >= 9):
            return ()
        # A national number must also be grouped as its region writes it (or not at all):
        # with ten regions, some region finds "3456 7890 1234" valid.
        leniency = (phonenumbers.Leniency.VALID if international
                    else phonenumbers.Leniency.STRICT_GROUPING)
        out = set()
        for region in regions[:1] if international else regions:
            for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=leniency):
                out.add((match.start, match.end))
        if not out and not international:
            # A number written with the country code of a configured region but without its
            # "+" ("91-415-555-0132", "44 20 7946 0958"): read as the international number it
            # is (its grouping is then not checked, as for any international number).
            for code in codes:
                if text.startswith(code) and text[len(code):len(code) + 1] in (" ", "-", "."):
                    for match in phonenumbers.PhoneNumberMatcher(
                            "+" + text, regions[0], leniency=phonenumbers.Leniency.VALID):
                        if match.start == 0:
                            out.add((0, match.end - 1))
        return tuple(sorted(out))

    def find(window: str, m: re.Match) -> list[tuple[int, int]]:
        return [(m.start() + a, m.start() + b) for a, b in spans(m.group())]

    return find




def is_tld(label: str) -> bool:
    """Whether a case-folded label of the folded text is a top-level domain."""
    return _is_tld(label)


Validator = Callable[[str, re.Match], list[tuple[int, int]]]


class Identifier(Recogniser):
    """A built-in identifier kind: its candidate pattern and validator.

    ``validate(window, match)`` returns the identifier spans (offsets into ``window``) inside a
    candidate, or none; ``regional`` marks a validator built for the configured phone regions
    (:meth:`configure`). ``prefixed``: the validator takes a prefix of the candidate (the
    engine then reads on from where the identifier ends).
    """

    family = "identifiers"

    def __init__(self, name: str, validate: Any, *, kinds: tuple[str, ...] | None = None,
                 prefixed: bool = False, regional: bool = False,
                 regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS) -> None:
        self.name, self.kinds = name, kinds or (name,)
        self.candidate = _CANDIDATES[name]
        self.prefixed, self.regional, self.regions = prefixed, regional, regions
        self._validate = validate

    def configure(self, **options: Any) -> Identifier:
        regions = tuple(options.get("phone_regions") or DEFAULT_PHONE_REGIONS)
        if not self.regional or regions == self.regions:
            return self
        return Identifier(self.name, self._validate, kinds=self.kinds, prefixed=self.prefixed,
                          regional=True, regions=regions)

    def validator(self) -> Validator:
        """``validate(window, match) → spans`` (for the phone: of the configured regions)."""
        return self._validate(self.regions) if self.regional else self._validate

    @property
    def compiled(self) -> re.Pattern[str]:
        return _compiled(self.candidate)

    def find_one(self, text: str) -> list[Span]:
        check = self.validator()
        return [(a, b, self.name) for m in self.compiled.finditer(text)
                for a, b in check(text, m) if b > a]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_identifier, (self.name, self.regions))


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _identifier(name: str, regions: tuple[str, ...]) -> Identifier:
    from textdp.text.recognisers import get

    built = get(name)
    assert isinstance(built, Identifier)
    return built.configure(phone_regions=regions)


for _recogniser in (Identifier("email", _email), Identifier("url", _url), Identifier("ip", _ip),
                    Identifier("iban", _iban, prefixed=True),
                    Identifier("card", _card, prefixed=True),
                    Identifier("phone", _phone, kinds=("phone", "reference"), regional=True)):
    _register_builtin(_recogniser)
