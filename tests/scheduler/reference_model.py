"""A deliberately simple, slow model of the scheduler spec, for differential tests.

Written from ``docs/simulator/spec.md`` alone, with no shortcut: at every
event time it recomputes everything from the job records (who holds what, in which
order, each share's queue), and the scheduling pass is the spec's sweeps read
literally: take every share's first RUNNABLE job not set aside, try step 2 for every
head, then 3, 4, 5; the first start ends the sweep; a sweep that starts nothing ends a
STRICT_FIFO pass, and under BEST_EFFORT_FIFO sets aside every current head at once.
Event times are exactly the spec's: submissions, actions, the startup end and the
completion of each job's *current* attempt (nothing of a preempted attempt).

It takes a scenario document (a dict, already valid) and returns
``{"jobs": {name: record}, "transitions": [...]}`` shaped as the simulator's output.
"""

from __future__ import annotations

import math
from typing import Any

HOLDING = ("SCHEDULED", "STARTING", "RUNNING")
TERMINAL = ("SUCCEEDED", "FAILED")


class Model:
    """The whole simulation state, as plain records."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.capacity: dict[str, int] = dict(doc["capacity"])
        opts = doc.get("options") or {}
        self.startup = opts.get("startupSeconds", 0) or 0
        self.strict = opts.get("queueing", "STRICT_FIFO") == "STRICT_FIFO"
        self.horizon = opts.get("horizonSeconds")
        self.shares: dict[str, dict[str, Any]] = {}
        for s in doc["shares"]:
            rsc = s.get("resourceSharingConfiguration", {})
            self.shares[s["quotaShareName"]] = {
                "limits": {c["capacityUnit"]: c["maxCapacity"] for c in s["capacityLimits"]},
                "strategy": rsc["strategy"],
                "borrowLimit": rsc.get("borrowLimit", -1),
                "inShare": (s.get("preemptionConfiguration") or {}).get(
                    "inSharePreemption", "DISABLED"
                ),
                "state": s.get("state", "ENABLED"),
            }
        self.jobs: list[dict[str, Any]] = []
        for i, j in enumerate(doc["jobs"]):
            self.jobs.append(
                {
                    "name": j["jobName"],
                    "share": j["quotaShareName"],
                    "submittedAt": j.get("submittedAt", 0),
                    "type": j["instanceType"],
                    "count": j.get("instanceCount", 1),
                    "remaining": j.get("runSeconds"),
                    "priority": j.get("schedulingPriority", 0),
                    "retries": j.get("preemptionRetriesBeforeTermination"),
                    "ckpt": j.get("checkpointIntervalSeconds"),
                    "overhead": j.get("restartOverheadSeconds", 0),
                    "order": i,
                    "status": "SUBMITTED",
                    "attempts": 0,
                    "preemptions": [],
                    "firstStartedAt": None,
                    "stoppedAt": None,
                    "statusReason": None,
                    "startedAt": None,
                    "startSeq": 0,
                    "runningSince": None,
                    "startupEnd": None,
                    "completionAt": None,
                    "enteredRunningSeq": 0,
                }
            )
        self.by_name = {j["name"]: j for j in self.jobs}
        self.actions = list(doc.get("actions") or [])
        self.transitions: list[dict[str, Any]] = []
        self.now: float = 0
        self.seq = 0

    # -- reading -------------------------------------------------------------------------

    def holders(self, share: str, u: str) -> list[dict[str, Any]]:
        """The share's jobs holding instances of u, in start order."""
        held = [
            j
            for j in self.jobs
            if j["share"] == share and j["type"] == u and j["status"] in HOLDING
        ]
        return sorted(held, key=lambda j: j["startSeq"])

    def used(self, share: str, u: str) -> int:
        return sum(j["count"] for j in self.holders(share, u))

    def free(self, u: str) -> int:
        return self.capacity.get(u, 0) - sum(self.used(s, u) for s in self.shares)

    def limit(self, share: str, u: str) -> int:
        return int(self.shares[share]["limits"].get(u, 0))

    def borrowed(self, share: str, u: str) -> int:
        return max(0, self.used(share, u) - self.limit(share, u))

    def reserve_idle(self, u: str) -> int:
        return sum(
            max(0, self.limit(s, u) - self.used(s, u))
            for s, cfg in self.shares.items()
            if cfg["strategy"] == "RESERVE"
        )

    def queue(self, share: str) -> list[dict[str, Any]]:
        """The share's RUNNABLE jobs that may head, in queue order."""
        limits = self.shares[share]["limits"]
        jobs = [
            j
            for j in self.jobs
            if j["share"] == share and j["status"] == "RUNNABLE" and j["type"] in limits
        ]
        return sorted(jobs, key=lambda j: (-j["priority"], j["submittedAt"], j["order"]))

    # -- admission rules -----------------------------------------------------------------

    def within_quota(self, job: dict[str, Any], released: int = 0) -> bool:
        s, u = job["share"], job["type"]
        if u not in self.shares[s]["limits"]:
            return False
        return self.used(s, u) - released + job["count"] <= self.limit(s, u)

    def may_borrow(self, job: dict[str, Any], released: int = 0) -> bool:
        s, u, c = job["share"], job["type"], job["count"]
        cfg = self.shares[s]
        if cfg["strategy"] != "LEND_AND_BORROW" or u not in cfg["limits"]:
            return False
        if self.within_quota(job, released):
            return False
        limit = self.limit(s, u)
        if cfg["borrowLimit"] != -1:
            borrowed_after = self.used(s, u) - released + c - limit
            if borrowed_after * 100 > limit * cfg["borrowLimit"]:
                return False
        return self.free(u) + released - self.reserve_idle(u) >= c

    def borrowed_holders(self, share: str, u: str, removed: list[dict[str, Any]]) -> list[Any]:
        """Jobs of the share holding borrowed instances of u (victims taken count as gone)."""
        held = [j for j in self.holders(share, u) if j not in removed]
        limit = self.limit(share, u)
        out = []
        total = 0
        for j in held:
            total += j["count"]
            if total > limit:
                out.append(j)
        return out

    @staticmethod
    def victim_key(j: dict[str, Any]) -> tuple[int, int]:
        return (j["priority"], -j["startSeq"])

    @staticmethod
    def keep_back(victims: list[Any], enough: Any) -> list[Any]:
        kept = list(victims)
        for i in range(len(kept) - 1, -1, -1):
            trial = kept[:i] + kept[i + 1 :]
            if enough(trial):
                kept = trial
        return kept

    def reclaim(self, job: dict[str, Any], released: int = 0) -> list[Any] | None:
        s, u, need = job["share"], job["type"], job["count"]
        free = self.free(u) + released
        if free >= need:
            return []
        taken: list[dict[str, Any]] = []
        while free + sum(v["count"] for v in taken) < need:
            candidates = [
                j
                for other in self.shares
                if other != s
                for j in self.borrowed_holders(other, u, taken)
            ]
            if not candidates:
                return None
            taken.append(min(candidates, key=self.victim_key))
        return self.keep_back(taken, lambda vs: free + sum(v["count"] for v in vs) >= need)

    def admission_after(self, job: dict[str, Any], victims: list[Any]) -> Any:
        released = sum(v["count"] for v in victims)
        if self.within_quota(job, released):
            reclaimed = self.reclaim(job, released)
            if reclaimed is None:
                return None
            return (list(victims), reclaimed, False)
        if self.may_borrow(job, released):
            return (list(victims), [], True)
        return None

    def in_share(self, job: dict[str, Any]) -> Any:
        s, u = job["share"], job["type"]
        if self.shares[s]["inShare"] != "ENABLED" or u not in self.shares[s]["limits"]:
            return None
        candidates = sorted(
            (j for j in self.holders(s, u) if j["priority"] < job["priority"]),
            key=self.victim_key,
        )
        taken: list[dict[str, Any]] = []
        for cand in candidates:
            taken.append(cand)
            if self.admission_after(job, taken) is not None:
                break
        else:
            return None
        needed = self.keep_back(taken, lambda vs: self.admission_after(job, vs) is not None)
        return self.admission_after(job, needed)

    # -- changes -------------------------------------------------------------------------

    def emit(self, job: dict[str, Any], to: str, reason: str) -> None:
        self.transitions.append(
            {
                "at": self.now,
                "jobName": job["name"],
                "from": job["status"],
                "to": to,
                "reason": reason,
            }
        )
        job["status"] = to

    def finish(self, job: dict[str, Any], status: str, reason: str) -> None:
        job["stoppedAt"] = self.now
        job["statusReason"] = None if status == "SUCCEEDED" else reason
        self.emit(job, status, reason)

    def enter_running(self, job: dict[str, Any]) -> None:
        self.emit(job, "RUNNING", "STARTUP_COMPLETE")
        job["runningSince"] = self.now
        self.seq += 1
        job["enteredRunningSeq"] = self.seq
        if job["firstStartedAt"] is None:
            job["firstStartedAt"] = self.now
        if job["remaining"] is not None:
            job["completionAt"] = self.now + job["remaining"]

    def start(self, job: dict[str, Any], borrowed: bool) -> None:
        self.seq += 1
        job["startSeq"] = self.seq
        job["attempts"] += 1
        job["startedAt"] = self.now
        job["completionAt"] = None
        self.emit(job, "SCHEDULED", "BORROWED" if borrowed else "WITHIN_QUOTA")
        self.emit(job, "STARTING", "STARTUP")
        if self.startup:
            job["startupEnd"] = self.now + self.startup
        else:
            self.enter_running(job)

    def end_attempt(self, job: dict[str, Any]) -> float:
        running = 0.0
        if job["status"] == "RUNNING":
            running = self.now - job["runningSince"]
        job["runningSince"] = None
        job["startupEnd"] = None
        job["completionAt"] = None
        return running

    def preempt(self, victim: dict[str, Any], kind: str, for_job: dict[str, Any]) -> None:
        running = self.end_attempt(victim)
        ckpt = victim["ckpt"]
        saved = 0 if not ckpt else math.floor(running / ckpt) * ckpt
        lost = running - saved
        if victim["remaining"] is not None:
            victim["remaining"] = victim["remaining"] - saved + victim["overhead"]
        victim["preemptions"].append(
            {"at": self.now, "kind": kind, "forJob": for_job["name"], "lostSeconds": lost}
        )
        retries = victim["retries"]
        if retries is not None and len(victim["preemptions"]) > retries:
            self.finish(victim, "FAILED", "RETRIES_EXHAUSTED")
        else:
            self.emit(victim, "RUNNABLE", f"PREEMPTED_{kind}")

    # -- the pass ------------------------------------------------------------------------

    def try_step(self, step: int, job: dict[str, Any]) -> bool:
        u, c = job["type"], job["count"]
        if step == 2:
            if self.within_quota(job) and self.free(u) >= c:
                self.start(job, borrowed=False)
                return True
        elif step == 3:
            if self.within_quota(job):
                victims = self.reclaim(job)
                if victims:
                    for v in victims:
                        self.preempt(v, "CROSS_SHARE", job)
                    self.start(job, borrowed=False)
                    return True
        elif step == 4:
            if self.may_borrow(job):
                self.start(job, borrowed=True)
                return True
        else:
            plan = self.in_share(job)
            if plan is not None:
                own, reclaimed, borrowed = plan
                for v in own:
                    self.preempt(v, "IN_SHARE", job)
                for v in reclaimed:
                    self.preempt(v, "CROSS_SHARE", job)
                self.start(job, borrowed=borrowed)
                return True
        return False

    def scheduling_pass(self) -> None:
        set_aside: list[Any] = []
        while True:
            heads = []
            for share in self.shares:
                for job in self.queue(share):
                    if job not in set_aside:
                        heads.append(job)
                        break
            heads.sort(key=lambda j: (j["submittedAt"], j["order"]))
            started = False
            for step in (2, 3, 4, 5):
                for job in heads:
                    if self.try_step(step, job):
                        started = True
                        break
                if started:
                    break
            if started:
                continue
            if self.strict or not heads:
                return
            set_aside.extend(heads)

    # -- time ----------------------------------------------------------------------------

    def event_times(self) -> list[float]:
        times: list[float] = []
        for j in self.jobs:
            if j["status"] == "SUBMITTED":
                times.append(j["submittedAt"])
            if j["status"] in ("SCHEDULED", "STARTING") and j["startupEnd"] is not None:
                times.append(j["startupEnd"])
            if j["status"] == "RUNNING" and j["completionAt"] is not None:
                times.append(j["completionAt"])
        times.extend(a["at"] for a in self.actions if not a.get("_done"))
        return [t for t in times if t >= self.now]

    def step_time(self, t: float) -> None:
        self.now = t
        for j in sorted(self.jobs, key=lambda j: j["startSeq"]):
            if j["status"] == "STARTING" and j["startupEnd"] == t:
                j["startupEnd"] = None
                self.enter_running(j)
        finishing = [j for j in self.jobs if j["status"] == "RUNNING" and j["completionAt"] == t]
        for j in sorted(finishing, key=lambda j: j["enteredRunningSeq"]):
            self.end_attempt(j)
            j["remaining"] = 0
            self.finish(j, "SUCCEEDED", "COMPLETED")
        for a in self.actions:
            if a["at"] == t and not a.get("_done"):
                a["_done"] = True
                self.apply(a)
        for j in self.jobs:
            if j["status"] == "SUBMITTED" and j["submittedAt"] == t:
                if self.shares[j["share"]]["state"] != "ENABLED":
                    self.finish(j, "FAILED", "SHARE_DISABLED")
                else:
                    self.emit(j, "RUNNABLE", "SUBMITTED")
        self.scheduling_pass()

    def apply(self, a: dict[str, Any]) -> None:
        if a["type"] == "UpdateServiceJob":
            job = self.by_name[a["jobName"]]
            if job["status"] not in TERMINAL:
                job["priority"] = a["schedulingPriority"]
        elif a["type"] == "TerminateServiceJob":
            job = self.by_name[a["jobName"]]
            if job["status"] not in TERMINAL:
                self.end_attempt(job)
                self.finish(job, "FAILED", "TERMINATED")
        else:
            cfg = self.shares[a["quotaShareName"]]
            if "capacityLimits" in a:
                cfg["limits"] = {c["capacityUnit"]: c["maxCapacity"] for c in a["capacityLimits"]}
            if "resourceSharingConfiguration" in a:
                rsc = a["resourceSharingConfiguration"]
                cfg["strategy"] = rsc["strategy"]
                cfg["borrowLimit"] = rsc.get("borrowLimit", -1)
            if "preemptionConfiguration" in a:
                cfg["inShare"] = a["preemptionConfiguration"].get("inSharePreemption", "DISABLED")
            if "state" in a:
                cfg["state"] = a["state"]

    def run(self) -> dict[str, Any]:
        while True:
            times = self.event_times()
            if not times:
                break
            t = min(times)
            if self.horizon is not None and t > self.horizon:
                break
            self.step_time(t)
        return {
            "jobs": {
                j["name"]: {
                    "status": j["status"],
                    "firstStartedAt": j["firstStartedAt"],
                    "stoppedAt": j["stoppedAt"],
                    "attempts": j["attempts"],
                    "preemptions": j["preemptions"],
                    "statusReason": j["statusReason"],
                }
                for j in self.jobs
            },
            "transitions": self.transitions,
        }


def reference_run(doc: dict[str, Any]) -> dict[str, Any]:
    """Run the scenario document on the model (see the module docstring)."""
    return Model(doc).run()
