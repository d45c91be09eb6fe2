"""KMS keys of the audit: the record MAC (HMAC_256) and the digest signature (ECC).

- :class:`KmsRecordSealer`: ``GenerateMac``/``VerifyMac`` with ``HMAC_SHA_256`` on a
  ``GENERATE_VERIFY_MAC`` key of spec ``HMAC_256`` (the template's ``AuditSealKey``;
  ``kms:GenerateMac`` only for the audit function's role, ``kms:VerifyMac`` also for
  the digest function and for readers the key policy admits).
- :class:`KmsDigestSigner`: ``Sign`` with ``ECDSA_SHA_256``, ``MessageType=RAW``, on a
  ``SIGN_VERIFY`` key of spec ``ECC_NIST_P256`` (``AuditDigestKey``; ``kms:Sign`` only
  for the digest function's role).
- :class:`PublicKeyChecker`: verifies digest signatures locally with ``cryptography``
  and the public key (from ``kms:GetPublicKey`` once, or a PEM/DER file exported from
  it), so checking digests needs no KMS write or sign right at all.

AWS: "HMAC keys in AWS KMS" and "Asymmetric keys in AWS KMS" (KMS Developer Guide);
``Sign`` takes at most 4096 bytes of RAW message.
"""

from __future__ import annotations

import base64
import threading
from collections import OrderedDict
from typing import Any

from botocore.exceptions import ClientError
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

#: MAC algorithm of the record seals.
MAC_ALGORITHM = "HMAC_SHA_256"

#: Signing algorithm of the digests.
SIGNING_ALGORITHM = "ECDSA_SHA_256"

#: Verified (message, MAC) pairs a sealer remembers (the most recent ones).
VERIFIED_MEMORY = 1024


class KmsRecordSealer:
    """:class:`~quotagov.governance.ports.RecordSealer` over a KMS HMAC key.

    A pair ``(message, MAC)`` KMS has verified is remembered (the last
    :data:`VERIFIED_MEMORY` of them, in this process), so checking the same bytes and
    MAC again (a message's proof and then the same record's, a retry within one
    invocation) asks KMS once: an HMAC is a fixed function of key and message, so a
    pair valid once stays valid. Only valid pairs are remembered; a MAC that fails is
    asked again each time.

    Args:
        key_id: key id, ARN or alias of the ``HMAC_256`` key (``AUDIT_SEAL_KEY``).
        client: a boto3 KMS client.
    """

    def __init__(self, key_id: str, client: Any) -> None:
        self.key_id = key_id
        self._client = client
        self._verified: OrderedDict[tuple[bytes, bytes], None] = OrderedDict()
        self._lock = threading.Lock()

    def seal(self, message: bytes) -> str:
        """``GenerateMac`` of ``message``, base64.

        Raises:
            botocore.exceptions.ClientError: e.g. AccessDenied for any role but the writer's.
        """
        answer = self._client.generate_mac(
            KeyId=self.key_id, Message=message, MacAlgorithm=MAC_ALGORITHM
        )
        return base64.b64encode(answer["Mac"]).decode("ascii")

    def check(self, message: bytes, seal: str) -> bool:
        """``VerifyMac``: True when valid, False for ``KMSInvalidMacException`` or a seal
        that is not base64.

        Raises:
            botocore.exceptions.ClientError: any other failure (no right, throttling).
        """
        try:
            mac = base64.b64decode(seal, validate=True)
        except ValueError:
            return False
        pair = (bytes(message), mac)
        with self._lock:
            if pair in self._verified:
                self._verified.move_to_end(pair)
                return True
        try:
            answer = self._client.verify_mac(
                KeyId=self.key_id, Message=message, MacAlgorithm=MAC_ALGORITHM, Mac=mac
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "KMSInvalidMacException":
                return False
            raise
        if not answer.get("MacValid"):
            return False
        with self._lock:
            self._verified[pair] = None
            while len(self._verified) > VERIFIED_MEMORY:
                self._verified.popitem(last=False)
        return True


class KmsDigestSigner:
    """:class:`~quotagov.governance.ports.DigestSigner` over a KMS ECC_NIST_P256 key.

    Args:
        key_id: key id or ARN of the ``SIGN_VERIFY`` key (``AUDIT_DIGEST_KEY``).
        client: a boto3 KMS client.
    """

    algorithm = SIGNING_ALGORITHM

    def __init__(self, key_id: str, client: Any) -> None:
        self.key_id = key_id
        self._client = client

    def sign(self, message: bytes) -> str:
        """``Sign`` (RAW, ECDSA_SHA_256) of ``message`` (at most 4096 bytes), base64 DER.

        Raises:
            botocore.exceptions.ClientError: e.g. AccessDenied for any role but the digest one.
        """
        answer = self._client.sign(
            KeyId=self.key_id,
            Message=message,
            MessageType="RAW",
            SigningAlgorithm=SIGNING_ALGORITHM,
        )
        return base64.b64encode(answer["Signature"]).decode("ascii")


class PublicKeyChecker:
    """:class:`~quotagov.governance.ports.SignatureChecker` with an EC public key.

    Args:
        public_key: DER (SubjectPublicKeyInfo, what ``GetPublicKey`` returns) or PEM.

    Raises:
        ValueError: the bytes are not an EC public key.
    """

    def __init__(self, public_key: bytes) -> None:
        loaded = (
            serialization.load_pem_public_key(public_key)
            if public_key.lstrip().startswith(b"-----BEGIN")
            else serialization.load_der_public_key(public_key)
        )
        if not isinstance(loaded, ec.EllipticCurvePublicKey):
            raise ValueError("the digest public key is not an elliptic-curve key")
        self._key = loaded

    @classmethod
    def from_kms(cls, key_id: str, client: Any) -> PublicKeyChecker:
        """The public key of ``key_id`` through one ``kms:GetPublicKey`` call."""
        return cls(client.get_public_key(KeyId=key_id)["PublicKey"])

    def check(self, message: bytes, signature: str) -> bool:
        """True when ``signature`` (base64 DER ECDSA) signs SHA-256 of ``message``."""
        try:
            raw = base64.b64decode(signature, validate=True)
            self._key.verify(raw, message, ec.ECDSA(hashes.SHA256()))
        except (InvalidSignature, ValueError):
            return False
        return True

    def pem(self) -> bytes:
        """The public key as PEM, to hand to verifiers in other accounts."""
        return self._key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
