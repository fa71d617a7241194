#!/usr/bin/env python3
"""The reference side of scripts/gpu-verify: PyTorch and CuPy doing what `gpu-doctor bench` does, at
the sizes of the plan in gpu-doctor's own run (never copied by hand), and the one-page summary.

  gpu_verify_ref.py measure BENCH_JSON REF_JSON   time the same operations in PyTorch and CuPy
  gpu_verify_ref.py summary DIR                   write DIR/summary.md from bench.json, ref.json,
                                                  check.json and machine.txt in DIR
  gpu_verify_ref.py smi-versions < TEXT           the driver and CUDA versions in nvidia-smi's
                                                  output (R610's spelling or the old one)
  gpu_verify_ref.py selftest                      this file's own tests (no GPU needed)

Operations, chosen to match gpu-doctor's: pinned host memory and `copy_(non_blocking=True)` for
host<->device copies (every size of the plan's `transfer_sizes_bytes`); a device-to-device
`copy_` of `d2d_bytes`, counted as bytes read plus written; `torch.matmul` at every `gemm_sizes` size
and precision (FP32 without TF32, TF32, FP16 and BF16 with FP32 accumulation, as cublasGemmEx with
CUBLAS_COMPUTE_32F). Timing: CUDA events around each call, the plan's warm-up count, then the
median of max(repetitions, 5) calls. A missing framework or GPU is written into the output as a
note, never a crash: the summary says what was not measured.
"""

import json
import os
import re
import sys
import time


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def timed(fn, warmup, reps, event, sync):
    """Median seconds of fn() between two events, after warm-up calls."""
    for _ in range(max(warmup, 1)):
        fn()
    sync()
    times = []
    for _ in range(reps):
        start, end = event(), event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return median(times)


def measure_torch(plan, reps, notes):
    import torch

    if not torch.cuda.is_available():
        notes.append(f"PyTorch {torch.__version__}: CUDA is not available")
        return None
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
    sync = torch.cuda.synchronize
    warmup = plan.get("warmup", 2)
    points = []
    big = max(plan["transfer_sizes_bytes"])
    host = torch.empty(big, dtype=torch.uint8, pin_memory=True)
    device = torch.empty(big, dtype=torch.uint8, device=dev)
    for size in plan["transfer_sizes_bytes"]:
        h, d = host[:size], device[:size]
        t = timed(lambda: d.copy_(h, non_blocking=True), warmup, reps, event, sync)
        points.append({"op": "h2d", "x": size, "value": size / t / 1e9, "unit": "GB/s"})
        t = timed(lambda: h.copy_(d, non_blocking=True), warmup, reps, event, sync)
        points.append({"op": "d2h", "x": size, "value": size / t / 1e9, "unit": "GB/s"})
    del host, device
    n = plan["d2d_bytes"]
    a, b = torch.empty(n, dtype=torch.uint8, device=dev), torch.empty(n, dtype=torch.uint8, device=dev)
    t = timed(lambda: b.copy_(a), warmup, reps, event, sync)
    points.append({"op": "d2d", "x": n, "value": 2 * n / t / 1e9, "unit": "GB/s"})
    del a, b
    matmul = torch.backends.cuda.matmul
    dtypes = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    for p in plan["gemm_precisions"]:
        matmul.allow_tf32 = p == "tf32"
        # FP32 accumulation, as gpu-doctor's cublasGemmEx calls.
        matmul.allow_fp16_reduced_precision_reduction = False
        matmul.allow_bf16_reduced_precision_reduction = False
        for k in plan["gemm_sizes"]:
            x = torch.randn(k, k, device=dev, dtype=torch.float32).to(dtypes[p])
            y = torch.randn_like(x)
            out = torch.empty_like(x)
            t = timed(lambda: torch.matmul(x, y, out=out), warmup, reps, event, sync)
            points.append({"op": "gemm", "precision": p, "x": k, "value": 2 * k**3 / t / 1e12, "unit": "TFLOP/s"})
            del x, y, out
    matmul.allow_tf32 = False
    torch.cuda.empty_cache()
    return {
        "framework": f"PyTorch {torch.__version__} (CUDA {torch.version.cuda})",
        "device": torch.cuda.get_device_name(dev),
        "points": points,
    }


def measure_cupy(plan, reps, notes):
    import cupy as cp
    import cupyx

    if cp.cuda.runtime.getDeviceCount() < 1:
        notes.append("CuPy: no CUDA device")
        return None
    event = cp.cuda.Event
    sync = cp.cuda.Device().synchronize
    stream = cp.cuda.get_current_stream()

    class Ev:  # cupy's events have the same shape as torch's except elapsed_time
        def __init__(self):
            self.e = event()

        def record(self):
            self.e.record(stream)

        def synchronize(self):
            self.e.synchronize()

        def elapsed_time(self, other):
            return cp.cuda.get_elapsed_time(self.e, other.e)

    warmup = plan.get("warmup", 2)
    points = []
    big = max(plan["transfer_sizes_bytes"])
    host = cupyx.empty_pinned((big,), dtype=cp.uint8)
    device = cp.empty(big, dtype=cp.uint8)
    for size in plan["transfer_sizes_bytes"]:
        h, d = host[:size], device[:size]
        t = timed(lambda: d.set(h, stream=stream), warmup, reps, Ev, sync)
        points.append({"op": "h2d", "x": size, "value": size / t / 1e9, "unit": "GB/s"})
        t = timed(lambda: d.get(stream=stream, out=h), warmup, reps, Ev, sync)
        points.append({"op": "d2h", "x": size, "value": size / t / 1e9, "unit": "GB/s"})
    del host, device
    n = plan["d2d_bytes"]
    a, b = cp.empty(n, dtype=cp.uint8), cp.empty(n, dtype=cp.uint8)
    t = timed(lambda: b.data.copy_from_device_async(a.data, n, stream), warmup, reps, Ev, sync)
    points.append({"op": "d2d", "x": n, "value": 2 * n / t / 1e9, "unit": "GB/s"})
    del a, b
    dtypes = {"fp32": cp.float32, "fp16": cp.float16}
    for p in plan["gemm_precisions"]:
        if p not in dtypes:
            notes.append(f"CuPy: {p} GEMM not measured (CuPy has no bfloat16; TF32 needs CUPY_TF32=1 at import)")
            continue
        for k in plan["gemm_sizes"]:
            x = cp.random.rand(k, k, dtype=cp.float32).astype(dtypes[p])
            y = cp.random.rand(k, k, dtype=cp.float32).astype(dtypes[p])
            out = cp.empty_like(x)
            t = timed(lambda: cp.matmul(x, y, out=out), warmup, reps, Ev, sync)
            points.append({"op": "gemm", "precision": p, "x": k, "value": 2 * k**3 / t / 1e12, "unit": "TFLOP/s"})
            del x, y, out
    cp.get_default_memory_pool().free_all_blocks()
    name = cp.cuda.runtime.getDeviceProperties(0)["name"]
    return {
        "framework": f"CuPy {cp.__version__} (CUDA runtime {cp.cuda.runtime.runtimeGetVersion()})",
        "device": name.decode() if isinstance(name, bytes) else name,
        "points": points,
    }


def measure(bench_json, ref_json):
    with open(bench_json) as f:
        plan = json.load(f)["plan"]
    reps = max(int(plan.get("repetitions", 5)), 5)
    result = {"plan": plan, "notes": []}
    for name, fn in (("torch", measure_torch), ("cupy", measure_cupy)):
        started = time.monotonic()
        try:
            result[name] = fn(plan, reps, result["notes"])
        except ImportError as e:
            result[name] = None
            result["notes"].append(f"{name}: not installed ({e})")
        except Exception as e:  # a framework failing is reported, the other still runs
            result[name] = None
            result["notes"].append(f"{name}: failed: {type(e).__name__}: {e}")
        if result[name]:
            result[name]["secs"] = round(time.monotonic() - started, 1)
    with open(ref_json, "w") as f:
        json.dump(result, f, indent=1)
    for n in result["notes"]:
        print(f"reference: {n}")
    return 0


# ---- nvidia-smi's versions ----------------------------------------------------------------------

# Driver R610 renamed nvidia-smi's "Driver Version" to "KMD Version" and "CUDA Version" to "CUDA UMD
# Version" (docs.nvidia.com/deploy/nvidia-smi: "deprecated Driver Version and CUDA Version in favor
# of KMD Version and CUDA UMD Version respectively"). The table's header has only the new labels
# (`| NVIDIA-SMI 610.43.02  KMD Version: 610.43.02  CUDA UMD Version: 13.3 |`,
# github.com/sgl-project/sglang/issues/27487); `-q` prints both, the old ones with a
# "[Deprecated; will be removed in CUDA 14.0. Use CUDA UMD Version instead]" suffix
# (github.com/PrismML-Eng/Bonsai-demo/pull/122), and `--version` says "Deprecated, see ..." in
# place of the old ones' value. Older drivers print only the old labels. The new label is read
# first; a value must be a version (digits and dots), so "Deprecated" and "N/A" are never one.
SMI_VERSION_LABELS = {
    "driver": ("KMD Version", "Driver Version"),
    "cuda": ("CUDA UMD Version", "CUDA Version"),
}


def smi_versions(text):
    """{"driver": ..., "cuda": ..., "labels": [...]} from nvidia-smi's table header, `-q` or
    `--version` output, in either spelling; a version nvidia-smi did not print is None."""
    found = {"labels": []}
    for key, labels in SMI_VERSION_LABELS.items():
        found[key] = None
        for label in labels:
            # The label starts a line or follows a space or the table's border; a colon, then the value.
            m = re.search(r"(?:^|[\s|])" + re.escape(label) + r"\s*:\s*(\d+(?:\.\d+)+)\b", text, re.I | re.M)
            if m:
                found[key] = m.group(1)
                found["labels"].append(label)
                break
    return found


def same_version(a, b, parts):
    """Whether two version texts agree in their first `parts` numbers."""
    if not a or not b:
        return False
    return str(a).split(".")[:parts] == str(b).split(".")[:parts]


def version_checks(machine_text, check, bench):
    """(check, PASS/FAIL/–, detail): nvidia-smi's driver and CUDA versions, in either spelling,
    beside what gpu-doctor read (check.json's driver, from NVML; bench.json's device, from CUDA)."""
    smi = smi_versions(machine_text or "")
    spelled = ", ".join(smi["labels"]) or "no version labels"
    driver = (((check or {}).get("snapshot") or {}).get("driver") or {}).get("value") or {}
    device = (bench or {}).get("device") or {}
    rows = []
    pairs = (
        ("driver version: gpu-doctor check = nvidia-smi", smi["driver"], driver.get("version"), 9),
        ("CUDA version of the driver: gpu-doctor check = nvidia-smi", smi["cuda"], driver.get("cuda_version"), 2),
        ("CUDA version of the driver: the benchmark's worker = nvidia-smi", smi["cuda"],
         device.get("driver_cuda_version"), 2),
    )
    for name, theirs, ours, parts in pairs:
        if not theirs or not ours:
            rows.append((name, "–", f"nvidia-smi {theirs or 'none'} ({spelled}), gpu-doctor {ours or 'none'}"))
        else:
            ok = same_version(ours, theirs, parts)
            rows.append((name, "PASS" if ok else "FAIL", f"nvidia-smi {theirs} ({spelled}), gpu-doctor {ours}"))
    return rows


# ---- summary ---------------------------------------------------------------------------------


def human_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def ref_value(ref, op, x, precision=None):
    if not ref:
        return None
    for p in ref["points"]:
        if p["op"] == op and p["x"] == x and p.get("precision") == precision:
            return p["value"]
    return None


def fmt(v):
    if v is None:
        return "–"
    return f"{v:,.1f}" if v >= 10 else f"{v:.3g}"


def ratio(ours, theirs):
    return f"{100 * ours / theirs:.0f} %" if ours is not None and theirs else "–"


def headline_rows(bench, ref):
    """(figure, gpu-doctor value, unit, op, x, precision) for each comparable judged measurement."""
    rows = []
    for test in bench.get("tests", []):
        result = test.get("result") or {}
        points = test.get("points", [])
        for m in result.get("measurements", []):
            kind = m["metric"].get("kind")
            if kind in ("host_to_device", "device_to_host") and m["metric"].get("pinned"):
                op = "h2d" if kind == "host_to_device" else "d2h"
                # The plateau's size: the pinned point whose median is the measurement.
                x = next((p["x"] for p in points if p["series"] == "pinned" and p["value"]["median"] == m["value"]), None)
                rows.append((m["label"] + (f" [{human_bytes(int(x))}]" if x else ""), m["value"], m["unit"], op, x, None))
            elif kind == "device_copy":
                rows.append((m["label"], m["value"], m["unit"], "d2d", bench["plan"]["d2d_bytes"], None))
            elif kind == "gemm":
                p, n = m["metric"]["precision"], m["metric"]["n"]
                rows.append((m["label"], m["value"], m["unit"], "gemm", n, p))
    return rows


def method_checks(bench, torch):
    """(check, PASS/FAIL/–, detail) for what only a GPU can show about how gpu-doctor measures
    (issue 17 items 2, 6, 7, 12)."""
    rows = []
    tests = {t["test"]: t for t in bench.get("tests", [])}
    # 7: small pinned copies are timed behind a stream hold, so they must not read slower than
    # PyTorch's copy_ timed with its enqueue inside the event window.
    sizes = sorted(bench["plan"].get("transfer_sizes_bytes", []))[:2]
    for test, op in (("h2d", "h2d"), ("d2h", "d2h")):
        points = (tests.get(test) or {}).get("points", [])
        for size in sizes:
            ours = next((p["value"]["median"] for p in points if p["series"] == "pinned" and p["x"] == size), None)
            theirs = ref_value(torch, op, size)
            if ours is None or not theirs:
                rows.append((f"{op} pinned {human_bytes(size)} ≥ 95 % of PyTorch (stream held while enqueuing)", "–",
                             "not measured by both"))
                continue
            rows.append((f"{op} pinned {human_bytes(size)} ≥ 95 % of PyTorch (stream held while enqueuing)",
                         "PASS" if ours >= 0.95 * theirs else "FAIL", f"{fmt(ours)} vs {fmt(theirs)} GB/s"))
    # 12: device copies stream from memory, never faster than the memory allows.
    d2d = tests.get("d2d") or {}
    for j in d2d.get("judged", []):
        exp = (j.get("judgement") or {}).get("expected") or {}
        v = j["measurement"]["value"]
        ok = bool(exp) and v <= exp["value"]
        rows.append((f"{j['measurement']['label']} ≤ theoretical memory bandwidth", "PASS" if ok else "FAIL",
                     f"{fmt(v)} of {fmt(exp.get('value'))} GB/s" if exp else "no theoretical value"))
    notes = "; ".join((d2d.get("result") or {}).get("notes", []))
    if notes:
        rows.append(("device copy size", "–", notes))
    # 2 and 6: compute expectations on the rated boost clock, with the clock measured beside it;
    # FMA (calibrated after a 250 ms warm-up) normal against that peak.
    for test in ("fma", "gemm"):
        for j in (tests.get(test) or {}).get("judged", [])[:1]:
            basis = ((j.get("judgement") or {}).get("expected") or {}).get("basis", "")
            ok = "rated boost clock" in basis and "measured during the test" in basis
            rows.append((f"{test}: expectation on the rated boost clock, measured clock beside it",
                         "PASS" if ok else "FAIL", basis))
            if test == "fma":
                pct = (j.get("judgement") or {}).get("percent_of_expected")
                rows.append(("FMA ≥ 80 % of the rated-clock FP32 peak", "PASS" if pct and pct >= 80 else "FAIL",
                             f"{pct:.0f} %" if pct else "no percentage"))
    return rows


# certificate.json's level names (probes/model/src/certify.rs, Level) and their numbers.
LEVELS = {"software": 1, "quick": 2, "stress": 3, "soak": 4}


def summary(out_dir):
    def load(name):
        try:
            with open(os.path.join(out_dir, name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    bench, ref, check = load("bench.json"), load("ref.json") or {}, load("check.json")
    torch, cupy = ref.get("torch"), ref.get("cupy")
    lines = ["# gpu-verify summary", ""]
    info = os.path.join(out_dir, "machine.txt")
    machine = open(info).read() if os.path.exists(info) else ""
    if machine:
        lines += ["```", machine.strip(), "```", ""]
    lines += ["## Versions: nvidia-smi's (R610's labels or the old ones) beside gpu-doctor's", "",
              "| check | result | detail |", "|---|---|---|"]
    for name, result, detail in version_checks(machine, check, bench):
        lines.append(f"| {name} | {result} | {detail.replace('|', '/')} |")
    lines.append("")
    if bench:
        dev = bench.get("device") or {}
        lines.append(f"gpu-doctor {bench.get('tool_version', '?')}, device: {dev.get('name', 'none reported')}, "
                     f"{bench.get('duration_secs', 0):.0f} s; full preset: {not bench['plan'].get('quick')}")
    for name, r in (("PyTorch", torch), ("CuPy", cupy)):
        if r:
            lines.append(f"{name}: {r['framework']} on {r['device']}, {r.get('secs', '?')} s")
    lines.append("")
    if bench:
        lines += ["## Each figure beside PyTorch's and CuPy's (ratio = gpu-doctor / reference; target ≥ 95 %)", "",
                  "| figure | gpu-doctor | PyTorch | ratio | CuPy | ratio |", "|---|--:|--:|--:|--:|--:|"]
        for label, value, unit, op, x, prec in headline_rows(bench, ref):
            t, c = ref_value(torch, op, x, prec), ref_value(cupy, op, x, prec)
            lines.append(f"| {label} | {fmt(value)} {unit} | {fmt(t)} | {ratio(value, t)} | {fmt(c)} | {ratio(value, c)} |")
        lines += ["", "## Measurement-method checks (issue 17: clock basis, warm-up, event window, L2)", "",
                  "| check | result | detail |", "|---|---|---|"]
        for check, result, detail in method_checks(bench, torch):
            lines.append(f"| {check} | {result} | {str(detail).replace('|', '/')[:400]} |")
        lines += ["", "## Every test", "", "| test | status | figures |", "|---|---|---|"]
        for test in bench.get("tests", []):
            result = test.get("result") or {}
            figs = "; ".join(f"{m['label']}: {fmt(m['value'])} {m['unit']}" for m in result.get("measurements", []))
            why = (test.get("failure") or {}).get("reason", "") if isinstance(test.get("failure"), dict) else ""
            lines.append(f"| {test['test']} | {test.get('status')} | {(figs or why).replace('|', '/')[:400]} |")
        findings = bench.get("findings") or []
        if findings:
            lines += ["", "Findings: " + "; ".join(f.get("id", "?") for f in findings)]
    else:
        lines.append("No bench.json: gpu-doctor's benchmark did not run.")
    if ref.get("notes"):
        lines += ["", "Reference notes: " + "; ".join(ref["notes"])]
    cert = load(os.path.join("certificate", "certificate.json"))
    if cert:
        lines += ["", f"## Certificate: {cert.get('verdict', '?').replace('_', ' ')} "
                      f"(certify --level {LEVELS.get(cert.get('level'), '?')}, {cert.get('duration_secs', 0):.0f} s)", ""]
        lines += [f"- {r}" for r in cert.get("reasons", [])]
        lines.append("certificate/certificate.md in the archive holds every check with its threshold and source.")
    else:
        lines += ["", "No certificate: `certify --level 2` did not run or wrote none (see certify.log)."]
    skipped = os.path.join(out_dir, "skipped.txt")
    if os.path.exists(skipped) and os.path.getsize(skipped):
        lines += ["", "## Not done", ""] + [f"- {l.strip()}" for l in open(skipped) if l.strip()]
    lines += ["", "Files: " + ", ".join(sorted(os.listdir(out_dir)))]
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


# ---- selftest ----------------------------------------------------------------------------------


def selftest():
    """The version reading over nvidia-smi's real output, old and R610+; run by .ci/run."""
    import unittest

    # R610's table header (NVIDIA B200, github.com/sgl-project/sglang/issues/27487) and
    # 610.43.03's (github.com/projectbluefin/finpilot/issues/160).
    table_610 = (
        "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |\n"
        "+-----------------------------------------+------------------------+----------------------+\n"
        "|   0  NVIDIA B200                    On  |   00000000:63:00.0 Off |                    0 |\n"
    )
    table_610_03 = "| NVIDIA-SMI 610.43.03              KMD Version: 610.43.03     CUDA UMD Version: 13.3     |"
    # R610's `-q` header: both spellings, the old with its deprecation suffix (the suffix as
    # github.com/PrismML-Eng/Bonsai-demo/pull/122 quotes it; the old label first, as -q prints it).
    q_610 = (
        "==============NVSMI LOG==============\n\n"
        "Driver Version                            : 610.43.02 [Deprecated; will be removed in CUDA 14.0. Use KMD Version instead]\n"
        "CUDA Version                              : 13.3 [Deprecated; will be removed in CUDA 14.0. Use CUDA UMD Version instead]\n"
        "KMD Version                               : 610.43.02\n"
        "CUDA UMD Version                          : 13.3\n\n"
        "Attached GPUs                             : 1\n"
    )
    # R610's `nvidia-smi --version`: lower-case labels, the old ones without a value.
    version_610 = (
        "NVIDIA-SMI version  : 610.43.02\n"
        "NVML version        : 610.43\n"
        'DRIVER version      : Deprecated, see "KMD version" instead\n'
        'CUDA version        : Deprecated, see "CUDA UMD version" instead\n'
        "KMD version         : 610.43.02\n"
        "CUDA UMD version    : 13.3\n"
    )
    # Before R610 (550.127.05, github.com/leptonai/gpud e2e/mock/nvidia-smi/test_data.go).
    table_550 = "| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: 12.4     |"
    q_550 = (
        "==============NVSMI LOG==============\n\n"
        "Timestamp                                 : Wed Jan 22 04:28:41 2025\n"
        "Driver Version                            : 550.127.05\n"
        "CUDA Version                              : 12.4\n"
    )

    class Versions(unittest.TestCase):
        def test_r610_spelling_is_read_in_every_form(self):
            for text in (table_610, q_610, version_610):
                v = smi_versions(text)
                self.assertEqual((v["driver"], v["cuda"]), ("610.43.02", "13.3"), text)
                self.assertEqual(v["labels"], ["KMD Version", "CUDA UMD Version"], text)
            v = smi_versions(table_610_03)
            self.assertEqual((v["driver"], v["cuda"]), ("610.43.03", "13.3"))

        def test_the_old_spelling_is_still_read(self):
            for text in (table_550, q_550):
                v = smi_versions(text)
                self.assertEqual((v["driver"], v["cuda"]), ("550.127.05", "12.4"), text)
                self.assertEqual(v["labels"], ["Driver Version", "CUDA Version"], text)

        def test_no_version_is_made_up(self):
            for text in ("", "nvidia-smi: not available", 'CUDA version : Deprecated, see "CUDA UMD version" instead',
                         "NVIDIA-SMI version  : 610.43.02\nNVML version        : 610.43\n", "CUDA Version: N/A"):
                v = smi_versions(text)
                self.assertEqual((v["driver"], v["cuda"]), (None, None), text)

        def test_gpu_doctor_is_compared_with_nvidia_smi_in_either_spelling(self):
            check = {"snapshot": {"driver": {"status": "found", "value": {"version": "610.43.02", "cuda_version": "13.3"}}}}
            bench = {"device": {"driver_cuda_version": "13.3"}}
            for text in (table_610, q_610, version_610, table_610 + table_550):
                self.assertEqual([r[1] for r in version_checks(text, check, bench)], ["PASS"] * 3, text)
            rows = version_checks(table_550, check, bench)
            self.assertEqual([r[1] for r in rows], ["FAIL"] * 3)
            self.assertIn("nvidia-smi 550.127.05 (Driver Version, CUDA Version), gpu-doctor 610.43.02", rows[0][2])
            # Nothing to compare: not a pass.
            self.assertEqual([r[1] for r in version_checks("", check, bench)], ["–"] * 3)
            self.assertEqual([r[1] for r in version_checks(table_610, None, None)], ["–"] * 3)

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Versions)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "measure":
        sys.exit(measure(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 3 and sys.argv[1] == "summary":
        sys.exit(summary(sys.argv[2]))
    if len(sys.argv) == 2 and sys.argv[1] == "smi-versions":
        v = smi_versions(sys.stdin.read())
        print(f"versions (either spelling): driver {v['driver'] or 'not shown'}, CUDA {v['cuda'] or 'not shown'}"
              f" (labels: {', '.join(v['labels']) or 'none found'})")
        sys.exit(0)
    if len(sys.argv) == 2 and sys.argv[1] == "selftest":
        sys.exit(selftest())
    print(__doc__, file=sys.stderr)
    sys.exit(2)
