"""How the modeled H100 speedups rank against speedups measured on an H100 (issue 15).

Reads the measured medians (bench/data/h100_measured.json, made from bench/gpu_rank.py's output on a
CUDA host with --summarise), computes the modeled speedup of the same programs on this CPU host with
the harness, and prints a Markdown table, Spearman's rank correlation overall and per difficulty, and
the worst disagreements.

    PYTHONPATH=. python bench/rank_report.py                      # modeled now vs the stored H100 data
    PYTHONPATH=. python bench/rank_report.py --summarise direct.jsonl [more.jsonl] > bench/data/h100_measured.json
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "h100_measured.json"
# Two speedups within 2% of each other are a tie: the H100 data cannot order them (a median's CV over the
# repeats reaches 3.4%, and programs that launch the very same kernels measure up to 1% apart).
TIE = 0.02


def summarise(paths: list[str]) -> dict:
    """Median and coefficient of variation per program from gpu_rank.py's JSON lines (direct mode)."""
    groups: dict[tuple[str, str], list[dict]] = collections.defaultdict(list)
    for path in paths:
        for line in open(path):
            rec = json.loads(line)
            if "failed" not in rec:
                groups[(rec["task"], rec["program"])].append(rec)
    programs = []
    for (task, program), recs in sorted(groups.items()):
        def cv(xs):
            return statistics.pstdev(xs) / statistics.mean(xs) if len(xs) > 1 else 0.0
        cand = [r["candidate_ms"] for r in recs]
        ref = [r["reference_ms"] for r in recs]
        programs.append({"task": task, "difficulty": recs[0]["difficulty"], "program": program,
                         "dtype": recs[0].get("dtype", "float32"),
                         "repeats": len(recs), "correct_on_gpu": all(r["ok"] for r in recs),
                         "reference_ms": statistics.median(ref), "candidate_ms": statistics.median(cand),
                         "candidate_cv": cv(cand), "reference_cv": cv(ref),
                         "speedup": statistics.median(r["speedup"] for r in recs),
                         "speedup_cv": cv([r["speedup"] for r in recs])})
    first = next(iter(groups.values()))[0]
    repeats = max(len(recs) for recs in groups.values())
    return {"device": first.get("device") or "NVIDIA H100 80GB HBM3 (driver 580.159.04, torch 2.11.0+cu130, "
                                              "triton 3.6.0)",
            "method": "triton.testing.do_bench at the task's largest gpu_shapes: CUDA events, L2 flushed "
                      "before every call, warmup 25 ms, rep 200 ms, median; reference and candidate "
                      f"alternating; {repeats} repeats",
            "programs": programs}


def ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    sa = math.sqrt(sum((x - ma) ** 2 for x in ra))
    sb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (sa * sb) if sa and sb else float("nan")


def modeled_speedups(programs: list[dict], price: str = "credited") -> dict[tuple[str, str], float]:
    """Each program's modeled speedup: the credited one, or (``price="gpu-shape"``) the GPU-shape price where the
    evaluation made one (the credit is the lower of it and the model-shape price), else the credited one."""
    from bench.gpu_rank import reference_as_submission
    from environment.evaluation.harness import evaluate
    from environment.tasks import get_task
    out = {}
    for p in programs:
        task = get_task(p["task"])
        if p["program"] == "reference":
            source = reference_as_submission(task)
        else:
            source = next(s for s in task.solutions["correct"] if s.stem == p["program"]).read_text()
        result = evaluate(task, source, seed=0)
        perf = result.performance
        credited = perf.speedup if perf and perf.speedup_kind == "modeled" else float("nan")
        gpu = perf.gpu_shape_speedup if perf and perf.speedup_kind == "modeled" else None
        out[(p["task"], p["program"])] = gpu if price == "gpu-shape" and gpu else credited
    return out


def fidelity(ok: list[tuple[dict, float]]) -> dict:
    """{scope: (programs, Spearman)} overall and per difficulty, and "pairs": (ordered alike, pairs)."""
    out = {"all": (len(ok), spearman([p["speedup"] for p, _ in ok], [m for _, m in ok]))}
    for level in ("easy", "medium", "hard"):
        sub = [(p, m) for p, m in ok if p["difficulty"] == level]
        if len(sub) > 2:
            out[level] = (len(sub), spearman([p["speedup"] for p, _ in sub], [m for _, m in sub]))
    within = collections.defaultdict(list)
    for p, m in ok:
        within[p["task"]].append((p, m))
    pairs = [((a["speedup"], ma), (b["speedup"], mb)) for group in within.values()
             for i, (a, ma) in enumerate(group) for b, mb in group[i + 1:]]
    out["pairs"] = (sum(1 for (xa, ma), (xb, mb) in pairs if (xa - xb) * (ma - mb) > 0), len(pairs))
    # with ties: alike when both order the pair the same way or both call it a tie
    out["pairs_ties"] = (sum(1 for (xa, ma), (xb, mb) in pairs if order(xa, xb) == order(ma, mb)), len(pairs))
    apart = [((xa, ma), (xb, mb)) for (xa, ma), (xb, mb) in pairs if order(xa, xb)]
    out["pairs_apart"] = (sum(1 for (xa, ma), (xb, mb) in apart if order(xa, xb) == order(ma, mb)), len(apart))
    return out


def order(a: float, b: float) -> int:
    """-1, 0 or 1: how a compares with b, 0 when within TIE of each other."""
    return 0 if abs(math.log(a / b)) <= math.log1p(TIE) else (1 if a > b else -1)


def disagreeing_pairs(ok: list[tuple[dict, float]]) -> list:
    """Same-task pairs the model and the H100 order differently, ties within TIE counted as such."""
    return [(a, b) for i, a in enumerate(ok) for b in ok[i + 1:] if a[0]["task"] == b[0]["task"]
            and order(a[0]["speedup"], b[0]["speedup"]) != order(a[1], b[1])]


def leave_one_out(ok: list[tuple[dict, float]]) -> None:
    """The figures with each task's programs left out. The model's constants are global (gpus.yaml: no
    constant per task or program), so what could have been tuned to this data is those constants; a
    figure that held only thanks to one task would show here as a row far below the others."""
    print("Leaving each task out (what could be tuned is gpus.yaml's global constants; none is per task):\n")
    print("| left out | programs | all | easy | medium | hard | pairs alike |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for task in sorted({p["task"] for p, _ in ok}):
        f = fidelity([(p, m) for p, m in ok if p["task"] != task])
        rows.append(f)
        cells = " | ".join(f"{f[s][1]:.3f}" if s in f else "–" for s in ("all", "easy", "medium", "hard"))
        print(f"| {task} | {f['all'][0]} | {cells} | {f['pairs'][0]} of {f['pairs'][1]} "
              f"({f['pairs_ties'][0]} with ties) |")
    lows = " | ".join(f"{min(f[s][1] for f in rows if s in f):.3f}" if any(s in f for f in rows) else "–"
                      for s in ("all", "easy", "medium", "hard"))
    print(f"| lowest | | {lows} | |\n")


def measured_under_todays_contract(programs: list[dict]) -> list[dict]:
    """The stored programs whose task still has the contract they were measured under (a record's `dtype`,
    float32 when absent: every task was fp32 when the stored data were measured). A task whose inputs
    changed since (the attention tasks run in bf16) needs new H100 measurements, not a comparison with old ones."""
    from environment.tasks import get_task
    kept, left = [], collections.Counter()
    for p in programs:
        if get_task(p["task"]).dtype == p.get("dtype", "float32"):
            kept.append(p)
        else:
            left[p["task"]] += 1
    for task, n in sorted(left.items()):
        print(f"Left out: {task}'s {n} programs, measured under a contract the task no longer has "
              f"(its dtype is now {get_task(task).dtype}); measure them again with bench/gpu_rank.py.")
    return kept


def report(data: dict, price: str = "credited") -> None:
    programs = measured_under_todays_contract(data["programs"])
    modeled = modeled_speedups(programs, price)
    if price != "credited":
        print("Modeled speedups: the GPU-shape price where there is one (not what the reward credits).\n")
    rows = [(p, modeled[(p["task"], p["program"])]) for p in programs]
    print(f"Measured on: {data['device']}. {data['method']}.\n")
    print("| task | difficulty | program | H100 reference ms | H100 candidate ms | CV | measured speedup | "
          "modeled speedup | modeled ÷ measured |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p, m in rows:
        print(f"| {p['task']} | {p['difficulty']} | {p['program']} | {p['reference_ms']:.4g} | {p['candidate_ms']:.4g} "
              f"| {p['candidate_cv'] * 100:.2f}% | {p['speedup']:.3g}x | {m:.3g}x | {m / p['speedup']:.2f} |")
    ok = [(p, m) for p, m in rows if not math.isnan(m)]
    print(f"\nMax CV of a median over {programs[0]['repeats']} repeats: "
          f"{max(p['candidate_cv'] for p in programs) * 100:.2f}% (candidate), "
          f"{max(p['reference_cv'] for p in programs) * 100:.2f}% (reference).\n")
    figures = fidelity(ok)
    print("| scope | programs | Spearman (modeled vs measured speedup) |")
    print("|---|---|---|")
    for scope in ("all", "easy", "medium", "hard"):
        if scope in figures:
            print(f"| {scope} | {figures[scope][0]} | {figures[scope][1]:.3f} |")
    print(f"\nPairs of programs of the same task ordered alike by the model and the H100: "
          f"{figures['pairs'][0]} of {figures['pairs'][1]} strictly (a tie on either side counts as a disagreement); "
          f"{figures['pairs_ties'][0]} of {figures['pairs_ties'][1]} counting a pair both call a tie "
          f"(within {TIE:.0%}) as alike. Of the {figures['pairs_apart'][1]} pairs the H100 tells apart by more "
          f"than {TIE:.0%}, the model orders {figures['pairs_apart'][0]} alike.\n")
    for (p, m), (q, n) in disagreeing_pairs(ok):
        print(f"- {p['task']}: {p['program']} vs {q['program']}: measured {p['speedup']:.3g}x vs "
              f"{q['speedup']:.3g}x, modeled {m:.3g}x vs {n:.3g}x")
    print()
    leave_one_out(ok)
    print("Worst disagreements (modeled ÷ measured, furthest from 1):\n")
    for p, m in sorted(ok, key=lambda r: -abs(math.log(r[1] / r[0]["speedup"])))[:6]:
        print(f"- {p['task']}/{p['program']}: modeled {m:.3g}x, measured {p['speedup']:.3g}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--summarise", nargs="+", help="gpu_rank.py direct-mode JSON lines to summarise")
    ap.add_argument("--price", choices=("credited", "gpu-shape"), default="credited",
                    help="which modeled speedup to rank: the credited one (default), or the GPU-shape price where "
                         "one was made (a diagnostic of the credit rule: the lower of it and the model-shape price)")
    args = ap.parse_args()
    if args.summarise:
        json.dump(summarise(args.summarise), sys.stdout, indent=1)
        print()
        return
    report(json.loads(DATA.read_text()), args.price)


if __name__ == "__main__":
    main()
