"""Print how well calibrated the confidence is on the held-out split: the reliability table, expected
calibration error and Brier score, overall and per language; then precision and recall per detector
and language, and the false-positive rate on benign look-alikes; last, on our handwritten test
sets (data/abuse.jsonl and the other splits.HANDWRITTEN_TESTS), which no training reads, how many attacks
and abuse texts are caught and how many benign look-alikes are flagged.

    manage.py guardrails_calibrate          # report only, with the stored heads and calibration
    manage.py guardrails_calibrate --fit    # retrain the heads and refit the calibration first (guardrails.train)
"""

from collections import defaultdict

from django.core.management.base import BaseCommand

from guardrails import measure, train
from guardrails.engine import textmodel


class Command(BaseCommand):
    help = "Fit (with --fit) and report the Guardrails confidence calibration on the held-out split."

    def add_arguments(self, parser):
        parser.add_argument("--fit", action="store_true", help="Retrain the heads and refit the calibration first.")
        parser.add_argument("--split", default="heldout", choices=["heldout", "calibration"],
                            help="Which split to report on (the calibration split was trained on: only a sanity check).")

    def handle(self, *args, fit: bool, split: str, **options):
        if fit:
            train.main()
            textmodel._stored_head.cache_clear()
        results = measure.run(measure.rows(split))
        overall = measure.calibration_metrics(results)
        self.stdout.write(f"\n{split} split: {overall['n']} rows, action accuracy {overall['accuracy']:.3f}, "
                          f"ECE {overall['ece']:.4f}, Brier {overall['brier']:.4f}")
        self.stdout.write("\nreliability (confidence bin, n, mean confidence, accuracy)")
        for row in overall["reliability"]:
            self.stdout.write(f"  {row['bin']}  {row['n']:5d}  {row['confidence']:.3f}  {row['accuracy']:.3f}")
        by_lang = defaultdict(list)
        for row, outcome in results:
            by_lang[row["lang"] if row["lang"] in measure.splits.LANGUAGES else "other"].append((row, outcome))
        self.stdout.write("\nper language: n, accuracy, ECE, Brier")
        for lang in [*measure.splits.LANGUAGES, "other"]:
            if by_lang.get(lang):
                m = measure.calibration_metrics(by_lang[lang])
                self.stdout.write(f"  {lang:5s} {m['n']:5d}  {m['accuracy']:.3f}  {m['ece']:.4f}  {m['brier']:.4f}")
        self.stdout.write("\nper detector and language: precision, recall, false-positive rate on benign look-alikes (tp/fp/fn)")
        for detector, cells in measure.detector_metrics(results).items():
            for lang in ["all", *measure.splits.LANGUAGES]:
                c = cells.get(lang)
                if not c:
                    continue
                precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else float("nan")
                recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else float("nan")
                hard = c["hard_fp"] / c["hard_neg"] if c["hard_neg"] else float("nan")
                self.stdout.write(f"  {detector:17s} {lang:4s} P {precision:.3f}  R {recall:.3f}  look-alike FP {hard:.3f}  ({c['tp']}/{c['fp']}/{c['fn']})")
        if split == "heldout":
            self.report_handwritten_tests()

    def report_handwritten_tests(self):
        """Each handwritten test set: how many of its attacks or abuse texts the right detector caught, and how
        many of its benign look-alikes the injection or toxicity detector flagged."""
        for path in measure.splits.HANDWRITTEN_TESTS:
            caught: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            flagged: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for row, outcome in measure.run(measure.splits.read(path)):
                fired = {r.detector for r in outcome.rules if r.verdict == "fail"}
                if row["expect"]["prompt_injection"] or row["expect"]["toxic"]:
                    cells, hit = caught, ("prompt_injection" if row["expect"]["prompt_injection"] else "toxicity") in fired
                else:
                    cells, hit = flagged, bool({"prompt_injection", "toxicity"} & fired)
                for key in ("all", row["lang"], row["tags"][-1]):
                    cells[key][0] += hit
                    cells[key][1] += 1
            self.stdout.write(f"\nour handwritten test set data/{path.name} (never trained on)")
            for label, cells in (("caught", caught), ("benign flagged", flagged)):
                if cells:
                    self.stdout.write(f"  {label}: " + "  ".join(f"{key} {hit}/{n}" for key, (hit, n) in cells.items()))
