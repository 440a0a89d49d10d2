#!/usr/bin/python3
"""ONNX Runtime held to its AVX2 kernels on an AVX-512 host, for tools/perf_compare.sh.

Usage: tools/ort_avx2.py MODEL.onnx

Issue 26's goals are stated for an AVX2-only host (a Zen 3). On an AVX-512 host, camclass and
XNNPACK can be held to the kernels such a host runs (CAMCLASS_CPU_ISA=avx2 and
tests/engine/cpu_isa_shim.c), but ONNX Runtime picks its kernels (MLAS) from the CPUID
instruction and the XGETBV register directly: no library call to wrap. Its kernels for
AVX-512 need the operating system to have enabled the AVX-512 register state, which it reads
from XCR0 with XGETBV, and it falls back to its AVX2 kernels (FMA3, AVX2, AVX-VNNI) when it is
not. This tool makes a copy of the ONNX Runtime that `tools/setup.sh ort` installed, in
${XDG_CACHE_HOME:-~/.cache}/camclass/ort-avx2 (for bench_ort.js's CAMCLASS_ORT_DIR), whose
libonnxruntime reads XCR0 as "x87, SSE and AVX state only": every XGETBV instruction
(0f 01 d0, found with objdump) becomes `mov al, 7; nop` (b0 07 90). An AVX2-only host has no
AVX-VNNI either (the VEX-encoded byte dot products of newer cores), which MLAS would still take
for its int8 kernels: its one test of that CPUID bit (`mov ecx, 1; cpuid; test al, 0x10; je`)
becomes `test al, 0`. Nothing else changes. The copy is made again when the installed library
changes (its size and time, in held-from).

Then it checks that the copy works as meant, through the kernel's count of each thread's use of
AVX-512 registers (/proc/PID/task/TID/arch_status, AVX512_elapsed_ms): MODEL runs on both
copies for a few seconds (GLIBC_TUNABLES keeps glibc's own string functions off AVX-512), and
the original must have used AVX-512 in its last second while the copy has not (no thread since
the runs began). Exit 0: the copy is ready (its folder on stdout); 1: it could not be made or
failed the check (the copy removed); 2: bad usage, or no AVX-512 here (there is nothing to hold
back: ONNX Runtime already runs its AVX2 kernels).
"""

import os
import re
import shutil
import subprocess
import sys
import time

XGETBV, HELD = b"\x0f\x01\xd0", b"\xb0\x07\x90"
# MLAS's AVX-VNNI test: mov ecx, 1; cpuid (leaf 7, sub-leaf 1); test al, 0x10 (AVX-VNNI); je.
VNNI_TEST = b"\xb9\x01\x00\x00\x00\x0f\xa2\xa8\x10\x74"
LIB = "node_modules/onnxruntime-node/bin/napi-v6/linux/x64"
# glibc's string functions on AVX-512 (EVEX) registers, off: they are not ONNX Runtime's kernels.
TUNABLES = "glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD"


def fail(msg, status=1):
    print(f"ort_avx2: {msg}", file=sys.stderr)
    sys.exit(status)


def starts_instruction(code, offset, hex_bytes):
    """Whether objdump's listing code has an instruction of hex_bytes at offset."""
    return re.search(rf"^\s*{offset:x}:\t{hex_bytes} ", code, re.M) is not None


def hold(lib):
    """Patches lib in place: XCR0 read without AVX-512 state, MLAS's AVX-VNNI test made to
    fail. Returns the number of XGETBV instructions. The code's addresses are its file offsets
    (checked against the bytes)."""
    code = subprocess.run(["objdump", "-d", lib], capture_output=True, text=True,
                          check=True).stdout
    data = bytearray(open(lib, "rb").read())
    sites = [int(a, 16) for a in re.findall(r"^\s*([0-9a-f]+):\s+0f 01 d0\s+xgetbv", code, re.M)]
    vnni = [m.start() for m in re.finditer(re.escape(VNNI_TEST), data)
            if starts_instruction(code, m.start(), "b9 01 00 00 00")]
    if not sites or any(data[s:s + 3] != XGETBV for s in sites) or len(vnni) != 1:
        fail(f"{lib}: {len(sites)} XGETBV instructions and {len(vnni)} AVX-VNNI tests where "
             "1 or more and exactly 1 were expected; this ONNX Runtime is not one this tool knows")
    for s in sites:
        data[s:s + 3] = HELD
    data[vnni[0] + 8] = 0  # test al, 0: never AVX-VNNI
    with open(lib, "wb") as f:
        f.write(data)
    return len(sites)


def copy_tree(src, dst):
    """dst: src's node_modules as links, but onnxruntime-node's own files copied (Node loads the
    binding from where its loader's real path is) and its x64 Linux library patched."""
    os.makedirs(f"{dst}/node_modules")
    for name in os.listdir(f"{src}/node_modules"):
        if name != "onnxruntime-node":
            os.symlink(os.path.realpath(f"{src}/node_modules/{name}"), f"{dst}/node_modules/{name}")
    pkg = "node_modules/onnxruntime-node"
    shutil.copytree(f"{src}/{pkg}", f"{dst}/{pkg}", ignore=lambda d, names: [
        n for n in names if d.endswith("/bin/napi-v6") and n != "linux" or
        d.endswith("/napi-v6/linux") and n != "x64"])
    return hold(f"{dst}/{LIB}/libonnxruntime.so.1")


def avx512_use(ort_dir, model):
    """The least AVX512_elapsed_ms over bench_ort.js's threads after 3 s of runs (-1: none
    ever), and how long the runs had been going then (ms)."""
    env = dict(os.environ, CAMCLASS_ORT_DIR=ort_dir, GLIBC_TUNABLES=TUNABLES)
    p = subprocess.Popen(["node", "tools/bench_ort.js", model, "--threads", "2", "--runs",
                          "100000", "--warmup", "0"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)  # Node's start and the session (its weights packed): not the runs
        began = time.monotonic()
        time.sleep(1.5)
        ran = (time.monotonic() - began) * 1000
        values = []
        for tid in os.listdir(f"/proc/{p.pid}/task"):
            with open(f"/proc/{p.pid}/task/{tid}/arch_status") as f:
                values += [int(v) for v in re.findall(r"AVX512_elapsed_ms:\s*(-?\d+)", f.read())]
    finally:
        p.kill()
        p.wait()
    if p.returncode not in (None, -9) or not values:
        fail(f"bench_ort.js on {model} ({ort_dir}) did not run for 3 s")
    used = [v for v in values if v >= 0]
    return (min(used) if used else -1), ran


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        fail(__doc__.strip().splitlines()[2], 2)
    model = sys.argv[1]
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if not re.search(r"^flags\s*:.*\bavx512f\b", open("/proc/cpuinfo").read(), re.M):
        fail("this host has no AVX-512: ONNX Runtime already runs its AVX2 kernels here", 2)
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                         "camclass")
    src = os.environ.get("CAMCLASS_ORT_DIR") or f"{cache}/ort"
    dst = f"{cache}/ort-avx2"
    lib = f"{src}/{LIB}/libonnxruntime.so.1"
    if not os.path.isfile(lib):
        fail(f"no ONNX Runtime for x64 Linux in {src}: install it with tools/setup.sh ort", 2)
    st = os.stat(lib)
    stamp = f"2 {src} {st.st_size} {st.st_mtime_ns}\n"  # the copy (way 2) is of this library
    try:
        with open(f"{dst}/held-from") as f:
            current = f.read() == stamp
    except OSError:
        current = False
    sites = 0  # XGETBV instructions held by this run (0: the copy was current)
    try:
        if not current:
            shutil.rmtree(dst, ignore_errors=True)
            sites = copy_tree(src, dst)
            with open(f"{dst}/held-from", "w") as f:
                f.write(stamp)
        orig, _ = avx512_use(src, model)
        held, ran = avx512_use(dst, model)
        if not 0 <= orig < 1000:
            fail(f"the check cannot tell: ONNX Runtime as installed did not use AVX-512 in its "
                 f"last second either (AVX512_elapsed_ms {orig})")
        if 0 <= held < ran:
            fail(f"the held copy still used AVX-512 during its runs (AVX512_elapsed_ms {held}, "
                 f"runs for {ran:.0f} ms)")
    except BaseException:
        shutil.rmtree(dst, ignore_errors=True)
        raise
    made = f"{sites} XGETBV instructions held" if sites else "the copy of an earlier run"
    print(f"ort_avx2: {made}; AVX-512 last used {orig} ms before the "
          f"check as installed, not during {ran:.0f} ms of runs held", file=sys.stderr)
    print(dst)


if __name__ == "__main__":
    main()
