"""Print the red-team attack class x independent signal table (docs/signals.md) from the attacks
themselves: which static rules fire on each attack, and whether that is a disagreement (the main
verdict pins no hack flag) or an agreement (it does). Runtime signals need a full evaluation and are
not part of this table (docs/signals.md says where they act).

    python scripts/signals_table.py            # the per-class table
    python scripts/signals_table.py --attacks  # one row per attack
"""
from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from environment.signals.static_rules import scan  # noqa: E402
from environment.tasks import get_task  # noqa: E402
from tests.redteam.expected import EXPECTED, OPEN_GAPS  # noqa: E402

# Later red-team rounds are named by round in expected.py: grouped here by what they attack.
MERGE = ((r"GPU-shape|issue.17|red team [3-6]|rebuild emits|written_elements|flash-attention|coverage|occupancy|"
          r"aten fill|position classes", "GPU-shape pricing"),
         (r"red team [78]", "measured timing"),
         (r"red team 23b", "PyTorch op and launch pricing"),
         (r"red team h23a", "library switches, precision, stand-ins"),
         (r"state|scratch|a190|not a hack", "state kept across calls"),
         (r"one program for the trials|model shape still", "one program for the trials, another for the price"),
         (r"a202 with|dependency closure", "red team closure"),
         (r"interpreter internals", "interpreter internals"),
         (r"class [234]|trusted cost|review of the replay", "trusted cost accounting (replay)"))


def classes() -> dict[str, str]:
    """attack file -> the class comment above it in expected.py (the first line of the block)."""
    out, current, fresh = {}, "", True
    for line in (ROOT / "tests" / "redteam" / "expected.py").read_text().splitlines():
        if line.startswith("}"):   # the end of EXPECTED: OPEN_GAPS below names attacks again, under no class
            break
        comment = re.match(r"^    # (.*)", line)
        if comment:
            if fresh:  # a block opening with "(" continues the class above
                current = re.sub(r"\s*\(.*$|:.*$", "", comment.group(1)).strip() or current
            fresh = False
            continue
        fresh = True
        name = re.match(r'^\s+"(a\d+_[^"]+\.py)"', line)
        if name:
            out[name.group(1)] = next((new for pattern, new in MERGE if re.search(pattern, current)), current)
    return out


def rows():
    for name, expect in sorted(EXPECTED.items(), key=lambda kv: int(kv[0][1:].split("_")[0])):
        hits = sorted(scan((ROOT / "tests" / "redteam" / "attacks" / name).read_text(),
                           get_task(expect.task).reference_code))
        flagged = expect.outcome == "flag" and name not in OPEN_GAPS  # an open gap: the main verdict misses it
        main = (f"flag {expect.flag}" if flagged else "OPEN: not flagged" if name in OPEN_GAPS else
                "harmless" + (f" ({expect.flag})" if expect.flag else ""))
        signal = ("agree" if flagged else "disagree") if hits else "-"
        yield name, classes().get(name, ""), main, hits, signal


def main() -> None:
    if "--attacks" in sys.argv:
        print("| attack | main verdict (pinned) | static rules fired | static_rules signal |\n|---|---|---|---|")
        for name, _, main, hits, signal in rows():
            print(f"| {name[:-3]} | {main} | {', '.join(hits) or '-'} | {signal} |")
        return
    table: dict[str, list] = {}
    for name, cls, main, hits, signal in rows():
        table.setdefault(cls, []).append((name, main, hits, signal))
    print("| attack class | attacks | main verdict flags (score 0) | static rules disagree (main: no hack flag) "
          "| static rules agree (main flags too) | rules that fire (attacks) | no static rule fires |\n"
          "|---|---|---|---|---|---|---|")
    for cls, items in table.items():
        flagged = sum(m.startswith("flag") for _, m, _, _ in items)  # noqa: F841
        dis = [n.split("_")[0] for n, _, _, s in items if s == "disagree"]
        agr = sum(s == "agree" for *_, s in items)
        miss = [n.split("_")[0] for n, _, h, _ in items if not h]
        fired = Counter(rule for _, _, h, _ in items for rule in h)
        print(f"| {cls} | {len(items)} | {flagged} | {len(dis)}{' (' + ', '.join(dis) + ')' if dis else ''} | {agr} "
              f"| {', '.join(f'{r} ({c})' for r, c in fired.most_common())} | {', '.join(miss) or '-'} |")


if __name__ == "__main__":
    main()
