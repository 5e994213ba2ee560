"""Audit a word mechanism's privacy claim by sampling (issue 15).

``textdp.audit.audit(mechanism, pairs="closest", draws=100_000)`` draws outputs from word pairs,
and certifies a lower bound on the ε each pair spends, against the mechanism's own privacy map.
It can prove a violation; it cannot prove privacy (see :data:`NOTE`). Above the core: it uses
mechanisms only through their public methods.
"""

from textdp.audit.core import (
    NO_EVIDENCE,
    NOTE,
    VIOLATION,
    AuditResult,
    DirectionAudit,
    PairAudit,
    audit,
)

__all__ = ["audit", "AuditResult", "PairAudit", "DirectionAudit", "VIOLATION", "NO_EVIDENCE",
           "NOTE"]
