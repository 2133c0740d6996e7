"""Parses a /metrics page with the Prometheus project's own Python parser (prometheus_client's
OpenMetrics parser, strict: it refuses anything the format does not allow) and prints what it
found as JSON: {family name: {"type": ..., "samples": [[sample name, labels, value], ...]}}.

Usage: check_metrics.py FILE   (exits 1 with the parser's error when the text is refused)
"""

import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    try:
        families = {
            family.name: {
                "type": family.type,
                "samples": [[s.name, s.labels, s.value] for s in family.samples],
            }
            for family in text_string_to_metric_families(text)
        }
    except Exception as error:  # the parser's refusal, whatever its class
        print(f"refused: {error}")
        sys.exit(1)
    print(json.dumps(families))


if __name__ == "__main__":
    main()
