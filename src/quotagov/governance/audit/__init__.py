"""The audit log: CloudTrail-recorded Batch calls and the controller's own decisions,
appended to hash chains (one per job queue) with their difference and risk findings.

Modules: :mod:`.cloudtrail_calls` (the CloudTrail record, parsed), :mod:`.targets` (which resource
and chain), :mod:`.diff` (before/after), :mod:`.usage` (what a share holds),
:mod:`.findings` (risk rules), :mod:`.known` (last known configurations and decisions),
:mod:`.trail` (the use case), :mod:`.decisions` (the controller's decision sink),
:mod:`.chain` (hashing, appending, verifying links), :mod:`.seals` (the record MACs),
:mod:`.digests` (signed digests), :mod:`.review` (reading a chain back), :mod:`.errors`
(every error the package raises).
"""
