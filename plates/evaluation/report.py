"""`plates eval`'s report of a scoring (plates.evaluation.scoring): one line, the errors photo by photo, or JSON."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from plates.evaluation.scoring import Ratio, Report


def _value(ratio: Ratio) -> str:
    return "n/a" if ratio.value is None else f"{ratio.value:.3f}"


def format_summary(report: Report) -> str:
    """One line: `detection R 0.912 P 0.934 (n=120) | small<40px R 0.700 (n=30) | recognition ... | 75 photos`."""
    small = f"{report.small_width:g}"
    return (
        f"detection R {_value(report.detection_recall)} P {_value(report.detection_precision)} "
        f"(n={report.detection_recall.total}) | small<{small}px R {_value(report.small_recall)} "
        f"(n={report.small_recall.total}) | recognition {_value(report.recognition)} (n={report.recognition.total}) | "
        f"end-to-end {_value(report.end_to_end)} (n={report.end_to_end.total}) | {report.photos} photos"
    )


def _show_box(box: Sequence[float]) -> str:
    return "(" + ", ".join(f"{v:.0f}" for v in box) + ")"


def format_report(report: Report) -> str:
    """The errors photo by photo, the metrics with their fractions, and the one-line summary as the last line."""
    lines = []
    if report.errors:
        lines.append(f"errors in {len(report.errors)} of {report.photos} photos:")
    else:
        lines.append(f"no errors in {report.photos} photos")
    for errors in report.errors:
        lines.append(errors.image)
        for miss in errors.missed:
            text = f" text={miss['text']}" if miss["text"] is not None else ""
            lines.append(f"  missed          box={_show_box(miss['box'])}{text}")
        for fp in errors.false_positives:
            lines.append(
                f"  false positive  box={_show_box(fp['box'])} text={fp['text'] or '(unread)'} score={fp['score']:.2f}"
            )
        for misread in errors.misread:
            lines.append(
                f"  misread         box={_show_box(misread['box'])} expected {misread['expected']} "
                f"got {misread['got'] or '(unread)'}"
            )
        # An end-to-end miss already shown as a missed or misread box of the same text is not repeated.
        shown = Counter(m["text"] for m in errors.missed if m["text"] is not None)
        shown.update(m["expected"] for m in errors.misread)
        for miss in errors.texts_not_found:
            if shown[miss["expected"]] > 0:
                shown[miss["expected"]] -= 1
                continue
            returned = ", ".join(miss["returned"]) or "no text"
            lines.append(f"  not found       {miss['expected']} (returned: {returned})")
    r = report
    lines += [
        "",
        f"detection     recall {_value(r.detection_recall)} ({r.detection_recall.hits}/{r.detection_recall.total})"
        f"  precision {_value(r.detection_precision)} ({r.detection_precision.hits}/{r.detection_precision.total})"
        f"  at IoU >= {r.iou_threshold:g}",
        f"small <{r.small_width:g}px  recall {_value(r.small_recall)} ({r.small_recall.hits}/{r.small_recall.total})",
        f"recognition   {_value(r.recognition)} ({r.recognition.hits}/{r.recognition.total})"
        "  exact texts of the detected labelled plates that carry one",
        f"end-to-end    {_value(r.end_to_end)} ({r.end_to_end.hits}/{r.end_to_end.total})"
        "  labelled texts found among their photo's texts",
        f"texts on unmatched boxes  {len(r.unmatched_texts)}  {', '.join(r.unmatched_texts)}".rstrip(),
        f"right readings blanked    {r.blanked_right}  by the server's min_text_score",
        *r.misreads.format(),
        format_summary(report),
    ]
    return "\n".join(lines)


def format_sweep(sweep: Sequence[tuple[float, Report]]) -> str:
    """A table: per min_text_score, recognition and end-to-end accuracy, texts on unmatched boxes, right
    readings blanked."""
    lines = [
        "min_text_score  recognition       end-to-end        texts on unmatched boxes  right readings blanked",
    ]
    for threshold, r in sweep:
        recognition = f"{_value(r.recognition)} ({r.recognition.hits}/{r.recognition.total})"
        end_to_end = f"{_value(r.end_to_end)} ({r.end_to_end.hits}/{r.end_to_end.total})"
        lines.append(
            f"{threshold:<14g}  {recognition:<16}  {end_to_end:<16}  {len(r.unmatched_texts):<24}  {r.blanked_right}"
        )
    return "\n".join(lines)


def report_to_dict(report: Report) -> dict:
    return {
        "photos": report.photos,
        "iou_threshold": report.iou_threshold,
        "small_width": report.small_width,
        "metrics": {
            "detection_recall": report.detection_recall.to_dict(),
            "detection_precision": report.detection_precision.to_dict(),
            "small_recall": report.small_recall.to_dict(),
            "recognition_accuracy": report.recognition.to_dict(),
            "end_to_end_accuracy": report.end_to_end.to_dict(),
        },
        "errors": [errors.to_dict() for errors in report.errors],
        "unmatched_texts": report.unmatched_texts,
        "blanked_right": report.blanked_right,
        "where_reading_fails": report.misreads.to_dict(),
        "summary": format_summary(report),
    }


def report_to_json(report: Report, sweep: Sequence[tuple[float, Report]] = ()) -> str:
    """The whole report as one JSON document, with the reports of a min_text_score `sweep` if given."""
    document = report_to_dict(report)
    if sweep:
        document["min_text_score_sweep"] = [
            {
                "min_text_score": threshold,
                "recognition_accuracy": r.recognition.to_dict(),
                "end_to_end_accuracy": r.end_to_end.to_dict(),
                "unmatched_texts": r.unmatched_texts,
                "blanked_right": r.blanked_right,
            }
            for threshold, r in sweep
        ]
    return json.dumps(document, ensure_ascii=False, indent=2)
