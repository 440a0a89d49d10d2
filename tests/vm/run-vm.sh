#!/bin/bash
# camclass — boots Debian's own kernel in qemu (TCG) with the vivid virtual camera loaded and runs
# a command inside; the guest's exit status becomes this script's exit status.
#
#   tests/vm/run-vm.sh [options] [--] [guest command...]
#     --bin PATH        copy a (statically linked) program into the guest's /bin; repeatable
#     --shell           interactive guest shell on the console instead of a command (exit: poweroff -f)
#     --output DIR      the guest's /out is copied back into DIR after the command (a tar
#                       written to a virtio disk; --output-mb sizes it, default 1024, sparse)
#     --vivid 'ARGS'    vivid module parameters (default: one webcam-like capture node)
#     --gpio-sim        also load configfs and the kernel's GPIO simulator, gpio-sim (configfs
#                       mounted on /sys/kernel/config); Debian's kernel lacks it, so
#                       tests/vm/build-gpio-sim.sh builds it once from Debian's kernel source
#     --timeout S       kill qemu after S seconds (default 280)
#     --cache DIR       kernel cache (default $CAMCLASS_VM_CACHE or ~/.cache/camclass-vm)
#     --vmlinuz         boot the compressed vmlinuz instead of the extracted vmlinux (slower)
#     --verbose         show the kernel's boot messages
#
# The kernel: `apt-cache depends linux-image-amd64` names the current package, `apt-get download`
# fetches it, `dpkg -x` unpacks it; vmlinux (for PVH direct boot, fastest) and the media modules
# are kept in the cache, one folder per package, so later runs start at once. With no network,
# the newest cached kernel is used. The initramfs is busybox-static, the modules and the --bin
# programs; /init loads the modules, runs the command and prints "CAMCLASS-VM-EXIT=<status>",
# which this script turns back into its exit status (no marker: 1, with the reason).
set -u

vivid_args="n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0"
timeout_s=280
cache="${CAMCLASS_VM_CACHE:-$HOME/.cache/camclass-vm}"
shell=0 output="" output_mb=1024 use_vmlinuz=0 verbose=0 gpio_sim=0
bins=()

while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bins+=("$2"); shift 2 ;;
    --shell) shell=1; shift ;;
    --output) output="$2"; shift 2 ;;
    --output-mb) output_mb="$2"; shift 2 ;;
    --vivid) vivid_args="$2"; shift 2 ;;
    --gpio-sim) gpio_sim=1; shift ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --cache) cache="$2"; shift 2 ;;
    --vmlinuz) use_vmlinuz=1; shift ;;
    --verbose) verbose=1; shift ;;
    --help|-h) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) echo "run-vm: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
guest_cmd=("$@")
if [ "$shell" = 0 ] && [ ${#guest_cmd[@]} -eq 0 ]; then
  echo "run-vm: no guest command; give one after the options, or --shell" >&2
  exit 2
fi

# Modules in load order (vivid's dependencies first). Debian ships no modules.dep in the package
# and this host may have no modinfo, so the order is written down here.
MODULES="mc videodev videobuf2-common videobuf2-v4l2 rc-core cec v4l2-dv-timings v4l2-tpg
  videobuf2-memops videobuf2-dma-contig videobuf2-vmalloc vivid"
# For --output: a virtio disk (/dev/vda) that receives /out as a tar.
DISK_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk"
# For --gpio-sim: made by tests/vm/build-gpio-sim.sh into the kernel's cache folder.
GPIO_MODULES="configfs gpio-sim"

for tool in qemu-system-x86_64 cpio python3 readelf; do
  command -v "$tool" >/dev/null || { echo "run-vm: $tool not found; run tools/setup.sh test (installs qemu-system-x86 cpio busybox-static)" >&2; exit 1; }
done
busybox=""
for b in /bin/busybox /usr/bin/busybox; do
  # Static: no program interpreter (readelf comes with binutils, part of build-essential).
  if [ -x "$b" ] && ! readelf -l "$b" 2>/dev/null | grep -q 'program interpreter'; then busybox="$b"; break; fi
done
[ -n "$busybox" ] || { echo "run-vm: no statically linked busybox; apt-get install busybox-static" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------
# The kernel: resolve, fetch, unpack, cache
# ---------------------------------------------------------------------------------------------

# Extracts the ELF vmlinux from a bzImage: finds the first compressed stream that decompresses
# to an ELF file (xz, gzip or lzma; Debian uses xz), as scripts/extract-vmlinux does.
extract_vmlinux() {
  python3 - "$1" "$2" <<'EOF'
import lzma, sys, zlib
img = open(sys.argv[1], 'rb').read()
def tries():
    for magic, mk in ((b'\xfd7zXZ\x00', lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ)),
                      (b'\x1f\x8b\x08', lambda: zlib.decompressobj(31)),
                      (b'\x5d\x00\x00', lambda: lzma.LZMADecompressor(lzma.FORMAT_ALONE))):
        pos = img.find(magic)
        while pos >= 0:
            yield pos, mk
            pos = img.find(magic, pos + 1)
for pos, mk in tries():
    try:
        out = mk().decompress(img[pos:])
    except Exception:
        continue
    if out[:4] == b'\x7fELF':
        open(sys.argv[2], 'wb').write(out)
        sys.exit(0)
sys.exit(1)
EOF
}

fetch_kernel() { # $1 package name; fills $cache/$1
  local pkg="$1" dir="$cache/$1" tmp
  tmp=$(mktemp -d "$cache/fetch.XXXXXX") || return 1
  echo "run-vm: fetching $pkg (once; cached in $dir)" >&2
  if ! (cd "$tmp" && apt-get download "$pkg" >/dev/null 2>"$tmp/apt.log"); then
    echo "run-vm: apt-get download $pkg failed: $(grep -m1 -E '^E:' "$tmp/apt.log")" >&2
    rm -rf "$tmp"; return 1
  fi
  dpkg -x "$tmp"/*.deb "$tmp/root" || { rm -rf "$tmp"; return 1; }
  mkdir -p "$tmp/out/modules"
  cp "$tmp"/root/boot/vmlinuz-* "$tmp/out/vmlinuz" || { rm -rf "$tmp"; return 1; }
  if extract_vmlinux "$tmp/out/vmlinuz" "$tmp/out/vmlinux"; then :; else
    echo "run-vm: could not extract vmlinux; will boot vmlinuz (slower)" >&2
    rm -f "$tmp/out/vmlinux"
  fi
  local m f
  for m in $MODULES $DISK_MODULES; do
    f=$(find "$tmp/root/lib/modules" \( -name "$m.ko*" -o -name "${m//-/_}.ko*" \) | head -n1)
    [ -n "$f" ] || { echo "run-vm: module $m missing from $pkg" >&2; rm -rf "$tmp"; return 1; }
    case "$f" in
      *.ko.xz) python3 -c 'import lzma, sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$f" >"$tmp/out/modules/$m.ko" ;;
      *.ko.gz) gzip -dc "$f" >"$tmp/out/modules/$m.ko" ;;
      *.ko.zst) zstd -qdc "$f" >"$tmp/out/modules/$m.ko" || echo "run-vm: zstd needed for $f (apt-get install zstd)" >&2 ;;
      *) cp "$f" "$tmp/out/modules/$m.ko" ;;
    esac || { rm -rf "$tmp"; return 1; }
  done
  rm -rf "$dir"
  mv "$tmp/out" "$dir" && rm -rf "$tmp"
}

have_kernel() { # $1 package: true when its cache folder is complete
  local m
  [ -n "$1" ] && [ -f "$cache/$1/vmlinuz" ] || return 1
  for m in $MODULES $DISK_MODULES; do [ -f "$cache/$1/modules/$m.ko" ] || return 1; done
}

mkdir -p "$cache" || exit 1
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
if [ -n "$pkg" ] && ! have_kernel "$pkg"; then
  fetch_kernel "$pkg" || pkg=""
fi
if ! have_kernel "$pkg"; then
  # No apt or no network: the newest kernel fetched before.
  pkg=$(ls -1 "$cache" 2>/dev/null | grep '^linux-image-' | sort -V | tail -n1)
  if ! have_kernel "$pkg"; then
    echo "run-vm: no Debian kernel available: apt-get download of linux-image-amd64's kernel failed and $cache holds none; check network access to the Debian mirror" >&2
    exit 1
  fi
  echo "run-vm: using cached $pkg" >&2
fi
kdir="$cache/$pkg"
kernel="$kdir/vmlinux"
if [ "$gpio_sim" = 1 ] && { [ ! -f "$kdir/modules/configfs.ko" ] || [ ! -f "$kdir/modules/gpio-sim.ko" ]; }; then
  "$(dirname "$0")/build-gpio-sim.sh" "$pkg" "$kdir" ||
    { echo "run-vm: no gpio-sim module for $pkg (see above)" >&2; exit 1; }
fi
[ "$use_vmlinuz" = 1 ] || [ ! -f "$kernel" ] && kernel="$kdir/vmlinuz"

# ---------------------------------------------------------------------------------------------
# The initramfs
# ---------------------------------------------------------------------------------------------

work=$(mktemp -d "${TMPDIR:-/tmp}/camclass-vm.XXXXXX") || exit 1
[ -n "${CAMCLASS_VM_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,out,lib/modules}
cp "$busybox" "$root/bin/busybox"
cp "$kdir"/modules/*.ko "$root/lib/modules/"
for b in "${bins[@]}"; do
  cp "$b" "$root/bin/" || exit 1
done

{
  # Each word of the command quoted for the guest shell.
  printf 'set --'
  for a in "${guest_cmd[@]}"; do printf " '%s'" "${a//\'/\'\\\'\'}"; done
  printf '\n'
} >"$root/cmd"

cat >"$root/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
export CAMCLASS_VIVID_KO=/lib/modules/vivid.ko CAMCLASS_VIVID_ARGS="$vivid_args"
for m in $(echo $MODULES); do
  if [ \$m = vivid ]; then insmod /lib/modules/vivid.ko $vivid_args; else insmod /lib/modules/\$m.ko; fi \
    || echo "run-vm guest: insmod \$m failed"
done
if [ -n "$output" ]; then
  for m in $DISK_MODULES; do insmod /lib/modules/\$m.ko || echo "run-vm guest: insmod \$m failed"; done
fi
if [ $gpio_sim = 1 ]; then
  for m in $GPIO_MODULES; do insmod /lib/modules/\$m.ko || echo "run-vm guest: insmod \$m failed"; done
  mount -t configfs none /sys/kernel/config || echo "run-vm guest: mounting configfs failed"
fi
i=0; while [ ! -e /dev/video0 ] && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i+1)); done
echo "CAMCLASS-VM-READY uptime=\$(cut -d' ' -f1 /proc/uptime)"
if [ $shell = 1 ]; then
  setsid cttyhack sh -l
  rc=0
else
  . /cmd
  "\$@"
  rc=\$?
fi
echo "CAMCLASS-VM-DONE uptime=\$(cut -d' ' -f1 /proc/uptime)"
if [ -n "$output" ]; then
  i=0; while [ ! -e /dev/vda ] && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i+1)); done
  (cd /out && tar -c .) >/dev/vda || echo "run-vm guest: writing /out to /dev/vda failed (too big for --output-mb?)"
  sync
fi
echo "CAMCLASS-VM-EXIT=\$rc"
sync
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet >"$work/initramfs.cpio") || exit 1

# ---------------------------------------------------------------------------------------------
# Boot
# ---------------------------------------------------------------------------------------------

append="console=ttyS0 rdinit=/init panic=-1 oops=panic tsc=reliable no_timer_check"
[ "$verbose" = 1 ] || append="$append quiet loglevel=1"
qemu=(qemu-system-x86_64 -accel tcg -cpu max -m 768 -smp 1 -nodefaults -no-reboot
  -display none -kernel "$kernel" -initrd "$work/initramfs.cpio" -append "$append")
qemu+=(-serial stdio)
if [ -n "$output" ]; then
  truncate -s "${output_mb}M" "$work/out.tar" || exit 1
  qemu+=(-drive "if=none,id=out,file=$work/out.tar,format=raw" -device virtio-blk-pci,drive=out)
fi

start=$(date +%s.%N)
echo "run-vm: booting $pkg ($(basename "$kernel")) under TCG" >&2
if [ "$shell" = 1 ]; then
  "${qemu[@]}"
  exit $?
fi
timeout --foreground -k 5 "$timeout_s" "${qemu[@]}" </dev/null | tee "$work/console.log"
qrc=${PIPESTATUS[0]}
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')

if [ -n "$output" ]; then
  if [ "$(head -c 512 "$work/out.tar" | tr -d '\0' | wc -c)" -eq 0 ]; then
    echo "run-vm: the guest wrote nothing to the output disk (see the console above)" >&2
    qrc=1
  elif mkdir -p "$output" && tar -xf "$work/out.tar" -C "$output"; then
    echo "run-vm: guest /out copied to $output" >&2
  else
    echo "run-vm: could not unpack the guest's /out into $output" >&2
    qrc=1
  fi
fi
rc=$(tr -d '\r' <"$work/console.log" | sed -n 's/^CAMCLASS-VM-EXIT=\([0-9]*\)$/\1/p' | tail -n1)
if [ -z "$rc" ]; then
  if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
    echo "run-vm: the guest did not finish within ${timeout_s}s (raise --timeout, or look at the console above)" >&2
  else
    echo "run-vm: the guest stopped without reporting a status (qemu exit $qrc; kernel panic or crash above)" >&2
  fi
  exit 1
fi
echo "run-vm: guest exit status $rc after ${secs}s" >&2
[ "$rc" = 0 ] && [ -n "$output" ] && [ "$qrc" != 0 ] && rc=1
exit "$rc"
