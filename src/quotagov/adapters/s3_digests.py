"""The digest bucket: :class:`~quotagov.governance.ports.DigestStore` over S3.

The bucket (template ``AuditDigestBucket``) has versioning and Object Lock in
COMPLIANCE mode with a default retention (stack parameter ``DigestRetentionDays``):
no one, the account root included, can delete or shorten the retention of a digest
version before it expires. A ``PutObject`` on an existing key would only add a version,
so readers look at every version (:attr:`StoredDigest.versions`) and use the oldest.

IAM: the digest function ``s3:PutObject``, ``s3:ListBucket``, ``s3:ListBucketVersions``,
``s3:GetObject``, ``s3:GetObjectVersion``; readers the same without ``PutObject``.
"""

from __future__ import annotations

from typing import Any

from quotagov.governance.ports import StoredDigest

#: Key prefix of every digest object.
DIGEST_PREFIX = "quotagov-audit-digests/"


class S3DigestStore:
    """Digests under ``DIGEST_PREFIX<chain>/`` of ``bucket``.

    Args:
        bucket: the bucket name (``AUDIT_DIGEST_BUCKET``).
        client: a boto3 S3 client.
    """

    def __init__(self, bucket: str, client: Any) -> None:
        self.bucket = bucket
        self._client = client

    def put(self, key: str, body: bytes) -> None:
        """``PutObject`` under the prefix, only if the key is new (``If-None-Match: *``),
        content type JSON, SHA-256 checksum.

        Raises:
            botocore.exceptions.ClientError: S3 refused (rights, throttling).
        """
        self._client.put_object(
            Bucket=self.bucket,
            Key=DIGEST_PREFIX + key,
            Body=body,
            ContentType="application/json",
            ChecksumAlgorithm="SHA256",
            IfNoneMatch="*",
        )

    def _versions(self, prefix: str) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = {}
        request: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix}
        while True:
            page = self._client.list_object_versions(**request)
            for version in page.get("Versions", []):
                found.setdefault(str(version["Key"]), []).append(version)
            for marker in page.get("DeleteMarkers", []):
                found.setdefault(str(marker["Key"]), []).append({**marker, "deleteMarker": True})
            if not page.get("IsTruncated"):
                return found
            request["KeyMarker"] = page.get("NextKeyMarker")
            request["VersionIdMarker"] = page.get("NextVersionIdMarker")

    def _read(self, key: str, versions: list[dict[str, Any]]) -> StoredDigest:
        real = [v for v in versions if not v.get("deleteMarker")]
        # S3 lists a key's versions newest first: the last one is the first written.
        oldest = real[-1] if real else None
        body = b""
        if oldest is not None:
            answer = self._client.get_object(
                Bucket=self.bucket, Key=key, VersionId=oldest["VersionId"]
            )
            body = answer["Body"].read()
        return StoredDigest(key[len(DIGEST_PREFIX) :], body, versions=len(versions))

    def digests(self, chain: str) -> list[StoredDigest]:
        """Every digest of ``chain`` in key order (each with its version count)."""
        versions = self._versions(f"{DIGEST_PREFIX}{chain}/")
        return [self._read(key, versions[key]) for key in sorted(versions)]

    def latest(self, chain: str) -> StoredDigest | None:
        """The digest with the greatest key (``ListObjectsV2`` pages, then one read)."""
        request: dict[str, Any] = {"Bucket": self.bucket, "Prefix": f"{DIGEST_PREFIX}{chain}/"}
        last: str | None = None
        while True:
            page = self._client.list_objects_v2(**request)
            for item in page.get("Contents", []):
                last = max(last or "", str(item["Key"]))
            if not page.get("IsTruncated"):
                break
            request["ContinuationToken"] = page["NextContinuationToken"]
        if last is None:
            return None
        body = self._client.get_object(Bucket=self.bucket, Key=last)["Body"].read()
        return StoredDigest(last[len(DIGEST_PREFIX) :], body)

    def chains(self) -> list[str]:
        """Every chain with a digest (``ListObjectsV2`` with a ``/`` delimiter)."""
        names: set[str] = set()
        request: dict[str, Any] = {
            "Bucket": self.bucket,
            "Prefix": DIGEST_PREFIX,
            "Delimiter": "/",
        }
        while True:
            page = self._client.list_objects_v2(**request)
            for common in page.get("CommonPrefixes", []):
                names.add(str(common["Prefix"])[len(DIGEST_PREFIX) :].rstrip("/"))
            if not page.get("IsTruncated"):
                return sorted(names)
            request["ContinuationToken"] = page["NextContinuationToken"]
