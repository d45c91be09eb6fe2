"""Sweeps: dotted paths into the policy, the grid, the Pareto front, and the same task
code on the local process pool and on a Dask distributed cluster (loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quotagov_tools.cli import main
from quotagov_tools.whatif import OptionError
from quotagov_tools.whatif.sweep import (
    local_runner,
    pareto,
    parse_axes,
    resolve,
    run_sweep,
    settings,
    variant,
)
from support.whatif import GPU, contention, small_policy

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "examples/traces/openb_pod_list_gpushare40.csv"
TODAY = ROOT / "src/quotagov/examples/whatif-today.yaml"
MAPS = [
    "--map", "LS=research:exploratory", "--map", "BE=applied:scheduled",
    "--map", "Burstable=release:release", "--map", "Guaranteed=release:release",
]  # fmt: skip


def test_paths_resolve_by_name_and_by_the_unique_last_key() -> None:
    doc = small_policy().model_dump(mode="json", exclude_none=True)
    assert resolve(doc, "shares.bg.borrowLimit") == (
        "quotaShares",
        0,
        "resourceSharingConfiguration",
        "borrowLimit",
    )
    assert resolve(doc, "quotaShares.med.capacityLimits.ml.g5.xlarge.maxCapacity") == (
        "quotaShares",
        1,
        "capacityLimits",
        0,
        "maxCapacity",
    )
    assert resolve(doc, "shares.med.maxCapacity") == (
        "quotaShares",
        1,
        "capacityLimits",
        0,
        "maxCapacity",
    )
    assert resolve(doc, "levels.standard.schedulingPriority") == (
        "priorityLevels",
        0,
        "schedulingPriority",
    )


def test_bad_sweeps_are_refused_with_every_fault() -> None:
    with pytest.raises(OptionError) as caught:
        parse_axes(
            [
                "shares.nope.borrowLimit=1",
                "shares.bg.strategy=1,2",
                "shares.med.maxCapacity=1,two",
                "borrowLimit",
            ],
            small_policy(),
        )
    assert caught.value.faults == [
        "--sweep shares.nope.borrowLimit: no 'nope.borrowLimit' here (known: bg, med)",
        "--sweep shares.bg.strategy: the field is str 'LEND_AND_BORROW', not a number",
        "--sweep shares.med.maxCapacity: 'two' is not a number",
        "--sweep 'borrowLimit': expected PATH=V1,V2,... (numbers)",
    ]


def test_a_setting_that_makes_an_invalid_policy_names_itself() -> None:
    policy = small_policy()
    axes = parse_axes(["shares.med.maxCapacity=1,0"], policy)
    assert settings(axes) == [{"shares.med.maxCapacity": 1}, {"shares.med.maxCapacity": 0}]
    assert variant(policy, axes, {"shares.med.maxCapacity": 1}) == policy
    with pytest.raises(OptionError) as caught:
        variant(policy, axes, {"shares.med.maxCapacity": 0})
    assert caught.value.faults[0].startswith(
        "--sweep shares.med.maxCapacity=0: quotaShares[1].capacityLimits[0].maxCapacity"
    )


def test_the_pareto_front() -> None:
    points = [(0, 85.0), (0.5, 28.0), (5.4, 19.0), (5.3, 17.0), (1.0, 28.0), (None, 1.0)]
    # (5.4, 19) is beaten by (5.3, 17); (1.0, 28) by (0.5, 28); a missing figure never counts
    assert pareto(points) == [True, True, False, True, False, False]
    assert pareto([(1, 1), (1, 1)]) == [True, True]  # a tie beats nobody


def _sweep(runner: object) -> dict[str, object]:
    policy = small_policy()
    return run_sweep(
        policy,
        parse_axes(["shares.bg.borrowLimit=0,-1", "shares.med.maxCapacity=1,2"], policy),
        contention(),
        capacity={GPU: 2},
        seeds=2,
        jitter_seconds=50,
        runner=runner,  # type: ignore[arg-type]
    )


def test_the_grid_in_this_process_and_in_the_pool_agree() -> None:
    alone = _sweep(local_runner(1))
    assert alone == _sweep(local_runner(2))
    rows = alone["settings"]
    assert [r["setting"] for r in rows] == [  # type: ignore[index]
        {"shares.bg.borrowLimit": 0, "shares.med.maxCapacity": 1},
        {"shares.bg.borrowLimit": 0, "shares.med.maxCapacity": 2},
        {"shares.bg.borrowLimit": -1, "shares.med.maxCapacity": 1},
        {"shares.bg.borrowLimit": -1, "shares.med.maxCapacity": 2},
    ]
    by = {(r["setting"]["shares.bg.borrowLimit"], r["setting"]["shares.med.maxCapacity"]): r
          for r in rows}  # type: ignore[index]  # fmt: skip
    # bg may not borrow: r2 waits for r1's 1000 s, finishes near 2000 s; a1 never waits
    assert by[(0, 1)]["lenderWaitP95"] == 0
    assert by[(0, 1)]["borrowerCompletionP95"] > 1900
    # bg borrows without cap: r2 runs at once, a1 reclaims med at ~100 s; with no
    # retries r2 fails and is reclassified into med, where it waits ~500 s behind a1
    assert 400 < by[(-1, 1)]["lenderWaitP95"] < 600
    assert by[(-1, 1)]["borrowerCompletionP95"] < 1100
    # med's limit of 2 on a 2-instance environment changes nothing: a trade-off, no winner
    assert by[(-1, 2)]["lenderWaitP95"] == by[(-1, 1)]["lenderWaitP95"]
    assert all(r["pareto"] for r in rows)  # type: ignore[index]
    assert alone["lenders"] == ["med"] and alone["borrowers"] == ["bg"]


@pytest.mark.slow
def test_dask_runs_the_same_tasks_with_the_same_results() -> None:
    from distributed import LocalCluster

    from quotagov_tools.whatif.sweep import dask_runner

    local = _sweep(local_runner(1))
    with LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        assert _sweep(dask_runner(cluster.scheduler_address)) == local


@pytest.mark.slow
def test_the_sweep_command_on_the_trace_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s"
    code = main(
        ["whatif", str(TRACE), "--compress", "50", "--limit", "3000", *MAPS,
         "--policy", str(TODAY), "--sweep", "shares.background.borrowLimit=0,50,200",
         "--seeds", "2", "--workers", "1", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    doc = json.loads((out / "sweep.json").read_text())
    assert (out / "sweep.png").read_bytes()[:4] == b"\x89PNG"
    assert [r["setting"]["shares.background.borrowLimit"] for r in doc["settings"]] == [0, 50, 200]
    assert any(r["pareto"] for r in doc["settings"])
    assert "Sweep of shares.background.borrowLimit, 2 seed(s)" in capsys.readouterr().out


def test_a_bad_sweep_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["whatif", str(TRACE), *MAPS, "--policy", str(TODAY),
         "--sweep", "shares.background.borowLimit=0,50", "--out", str(tmp_path)]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "--sweep shares.background.borowLimit: no 'borowLimit' here" in err
    assert not (tmp_path / "sweep.json").exists()
