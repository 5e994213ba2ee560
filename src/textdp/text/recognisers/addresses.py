"""The address family: street addresses by pattern.

House number + street name + street type in English (``221B Baker Street``, ``1600 Pennsylvania
Avenue NW``); street type + name + number in French, Spanish, Italian, Portuguese and Polish forms
(``10 rue de la Paix``, ``Calle Mayor 12``, ``ul. Marszałkowska 10``); name + street type + number
in German, Dutch and Nordic forms (``Hauptstraße 5``, ``Kerkstraat 12a``, ``Storgatan 3``); each
with an optional unit (``Apt 4B``, ``Suite 200``). Every pattern needs a digit, so a document
without one is not scanned.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Sequence

from textdp.text.recognisers import Recogniser, Span, _register_builtin

__all__ = ["Addresses"]

_DIGIT = re.compile(r"\d")
_EN_STREET = (r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|"
              r"Square|Sq|Terrace|Way|Parkway|Pkwy|Highway|Hwy|Close|Crescent|Row|Circle|Cir|"
              r"Trail|Alley|Gardens|Grove|Hill|Mews|Walk")
_NAME = r"[^\W\d_][\w'’.-]*"
_UNIT = r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl)\.?\s*#?\s*[\w-]{1,6})?"
_ROMANCE = (r"rue|avenue|av\.|boulevard|bd|chemin|place|allée|impasse|quai|calle|c/|avenida|"
            r"avda\.|paseo|plaza|carrer|via|viale|piazza|corso|largo|rua|travessa|praça|alameda|"
            r"ulica|ul\.|aleja|al\.")
_PARTICLES = r"(?:(?:de|del|de\s+la|della|delle|dei|des|du|la|le|les|di|da|do|dos|das)\s+)*"
_GERMANIC = (r"straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|laan|straat|gracht|"
             r"plein|gatan|vägen|gata|vej|gade|veien|gate|katu|tie|utca")
_ADDRESS = (
    # 221B Baker Street, 1600 Pennsylvania Avenue NW, 12-14 High St., Apt 4
    rf"(?<![\w-])\d{{1,5}}[A-Za-z]?(?:-\d{{1,5}})?,?\s+(?:{_NAME}\s+){{0,3}}(?:{_EN_STREET})\.?"
    rf"(?:\s+(?:NW|NE|SW|SE|N|S|E|W))?(?!\w){_UNIT}"
    # 10 rue de la Paix; Calle Mayor 12; Via Roma 5; ul. Marszałkowska 10
    rf"|(?<!\w)(?:\d{{1,5}}[A-Za-z]?,?\s+)?(?i:{_ROMANCE})\s+{_PARTICLES}[^\W\d_][\w'’-]*"
    rf"(?:\s+[A-ZÀ-Þ][\w'’-]*){{0,3}}(?:,?\s+\d{{1,5}}[A-Za-z]?(?!\w))?{_UNIT}"
    # Hauptstraße 5, Kerkstraat 12a, Storgatan 3
    rf"|(?<!\w)[A-ZÀ-Þ][\w'’-]*(?i:{_GERMANIC})\s+\d{{1,5}}[a-z]?(?!\w){_UNIT}"
    rf"|(?<!\w)[A-ZÀ-Þ][\w'’-]*\s+(?i:Straße|Strasse|Str\.|Weg|Gasse|Platz|Allee)\s+\d{{1,5}}"
    rf"[a-z]?(?!\w){_UNIT}"
)


@functools.cache
def _address_regex() -> re.Pattern[str]:
    return re.compile(_ADDRESS)



class Addresses(Recogniser):
    """Street addresses (kind ``address``) by the patterns above."""

    name = "address"
    kinds = ("address",)
    labels = {"address": "[ADDRESS]"}

    def find(self, docs: Sequence[str], kinds: Collection[str] | None = None) -> list[list[Span]]:
        out: list[list[Span]] = [[] for _ in docs]
        if kinds is not None and "address" not in kinds:
            return out
        pattern = _address_regex()
        for d, text in enumerate(docs):
            if _DIGIT.search(text) is not None:  # compiled scan; the patterns need a digit
                out[d] = [(m.start(), m.end(), "address") for m in pattern.finditer(text)]
        return out

    def __reduce__(self) -> tuple[object, ...]:
        return (_builtin, ())


def _builtin() -> Addresses:
    return _ADDRESSES


_ADDRESSES = Addresses()
_register_builtin(_ADDRESSES)
