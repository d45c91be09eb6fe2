"""The message key port: proof of sender for what quotagov's parts hand each other.

Rules and formats: :mod:`quotagov.governance.provenance`. Adapter:
:class:`quotagov.adapters.kms_audit.KmsRecordSealer` on the ``MESSAGE_KEY`` KMS
``HMAC_256`` key (``GenerateMac`` for quotagov's sending roles only, by key policy).
"""

from __future__ import annotations

from typing import Protocol


class MessageMac(Protocol):
    """A keyed MAC only quotagov's senders can compute (KMS ``HMAC_256`` key).

    Adapter: :class:`quotagov.adapters.kms_audit.KmsRecordSealer` on ``MESSAGE_KEY``.
    """

    key_id: str

    def seal(self, message: bytes) -> str:
        """The MAC of ``message`` (at most 4096 bytes), base64 text (``GenerateMac``)."""
        ...

    def check(self, message: bytes, seal: str) -> bool:
        """True when ``seal`` is the MAC of ``message`` (``VerifyMac``)."""
        ...
