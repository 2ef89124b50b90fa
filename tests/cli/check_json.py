"""check_json.py FILE [KEY=VALUE ...]: FILE holds exactly one JSON object (nothing else)
with the fields of `krill solve --json` and their types; each KEY=VALUE must hold too
(VALUE is parsed as JSON: converged=true, iterations=2, n=64)."""
import json
import sys

NUMBER = (int, float)
FIELDS = {
    "converged": bool, "reason": str, "iterations": int, "relres": NUMBER,
    "error": NUMBER + (type(None),), "times": dict, "format": str, "device": str,
    "n": int, "nnz": int, "solver": str, "precond": str, "rtol": NUMBER,
    "precond_detail": (str, type(None)),
}
TIMES = ("setup", "spmv", "precond", "ortho", "other", "total")

def main():
    with open(sys.argv[1]) as f:
        text = f.read()
    doc = json.loads(text)                     # raises on trailing text after the object
    failures = []
    if not isinstance(doc, dict):
        failures.append("not a JSON object")
        doc = {}
    for key, kind in FIELDS.items():
        if key not in doc:
            failures.append(f"missing field {key}")
        elif not isinstance(doc[key], kind) or (kind is int and isinstance(doc[key], bool)):
            failures.append(f"{key} = {doc[key]!r} has the wrong type")
    for key in TIMES:
        value = doc.get("times", {}).get(key)
        if not isinstance(value, NUMBER) or isinstance(value, bool) or value < 0:
            failures.append(f"times.{key} = {value!r} is not a number >= 0")
    for pair in sys.argv[2:]:
        key, value = pair.split("=", 1)
        if doc.get(key) != json.loads(value):
            failures.append(f"{key} = {doc.get(key)!r}, expected {value}")
    for failure in failures:
        print("FAIL:", failure)
    print(text)
    return 1 if failures else 0

sys.exit(main())
