#!/bin/bash
# camclass — the kernel's GPIO simulator (gpio-sim) and configfs as modules for the vivid guest
# (tests/vm/run-vm.sh --gpio-sim), written into the kernel's cache folder.
#
#   tests/vm/build-gpio-sim.sh PACKAGE DIR   e.g. linux-image-6.1.0-56-amd64 ~/.cache/camclass-vm/<it>
#
# configfs.ko comes from the kernel package. Debian builds its kernel without CONFIG_GPIO_SIM
# (and without CONFIG_IRQ_SIM, which gpio-sim selects), so when the package has no gpio-sim.ko
# this builds it as an out-of-tree module against the same kernel: drivers/gpio/gpio-sim.c and
# kernel/irq/irq_sim.c from Debian's linux-source package of the same version, compiled together
# as one gpio-sim.ko with Debian's linux-headers (kbuild) for that kernel. One line of irq_sim.c
# is changed: built in, it calls handle_simple_irq(irq_to_desc(irq)), and irq_to_desc is not
# exported to modules; generic_handle_irq(irq) does the same for a module (the simple handler
# irq_sim sets is what it runs). The simulator's lines, values and configfs interface are the
# kernel's own. Needs apt-get download access once (about 150 MB: the source, the headers),
# gcc and make (build-essential); takes a minute or two.
set -u
pkg="$1" dir="$2"
mkdir -p "$dir/modules" || exit 1
tmp=$(mktemp -d "$dir/gpio-sim.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
say() { echo "build-gpio-sim: $*" >&2; }
download() { # packages...
  (cd "$tmp" && apt-get download "$@" >/dev/null 2>"$tmp/apt.log") && return 0
  say "apt-get download $* failed: $(grep -m1 -E '^E:' "$tmp/apt.log")"
  return 1
}
# A module file (.ko or .ko.xz) into $dir/modules/$2.ko, renamed into place (a run-vm.sh of
# another test may be copying the folder meanwhile).
unpack_ko() {
  local part="$tmp/$2.ko.part"
  case "$1" in
    *.ko.xz) python3 -c 'import lzma, sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$1" >"$part" ;;
    *) cp "$1" "$part" ;;
  esac && mv "$part" "$dir/modules/$2.ko"
}

say "making configfs.ko and gpio-sim.ko for $pkg (once; kept in $dir/modules)"
download "$pkg" || exit 1
dpkg -x "$tmp"/"$pkg"_*.deb "$tmp/image" || exit 1
version=$(dpkg-deb -f "$tmp"/"$pkg"_*.deb Version)
f=$(find "$tmp/image/lib/modules" -name 'configfs.ko*' | head -n1)
[ -n "$f" ] || { say "$pkg has no configfs module"; exit 1; }
unpack_ko "$f" configfs || exit 1
f=$(find "$tmp/image/lib/modules" -name 'gpio-sim.ko*' | head -n1)
if [ -n "$f" ]; then
  unpack_ko "$f" gpio-sim && say "$pkg has gpio-sim itself" && exit 0
  exit 1
fi
if ! grep -q '^# CONFIG_GPIO_SIM is not set' "$tmp"/image/boot/config-*; then
  say "$pkg has no gpio-sim module, yet its config does not say it is off; look at its CONFIG_GPIO_SIM"
  exit 1
fi

# Headers (kbuild) and the source of the same version.
headers=${pkg/linux-image-/linux-headers-}
series=$(echo "$version" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
download "$headers=$version" || exit 1
deps=$(dpkg-deb -f "$tmp/$headers"_*.deb Depends | tr ',' '\n' | awk '{print $1}' |
  grep -E '^linux-(headers-.*-common|kbuild-)')
download $(for d in $deps; do printf '%s=%s ' "$d" "$version"; done) "linux-source-$series=$version" || exit 1
for d in "$tmp"/linux-headers-*.deb "$tmp"/linux-kbuild-*.deb; do dpkg -x "$d" "$tmp/root" || exit 1; done
kdir="$tmp/root/usr/src/$headers"
# Its Makefile includes the -common one by its installed path: point it into $tmp.
sed -i "s|/usr/src/|$tmp/root/usr/src/|" "$kdir/Makefile" || exit 1
mkdir -p "$tmp/mod"
src="linux-source-$series"
dpkg-deb --fsys-tarfile "$tmp"/linux-source-*.deb | tar -xO "./usr/src/$src.tar.xz" |
  tar -xJ -C "$tmp/mod" --strip-components=3 "$src/drivers/gpio/gpio-sim.c" \
    "$src/drivers/gpio/gpiolib.h" "$src/kernel/irq/irq_sim.c" ||
  { say "gpio-sim.c, gpiolib.h or irq_sim.c not in $src $version"; exit 1; }
mv "$tmp/mod/gpio-sim.c" "$tmp/mod/gpio-sim-main.c"
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$tmp/mod/irq_sim.c"
grep -q 'generic_handle_irq(irqnum);' "$tmp/mod/irq_sim.c" || { say "irq_sim.c of $version differs from the one this script knows; adapt its sed"; exit 1; }
printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n' >"$tmp/mod/Kbuild"
if ! make -C "$kdir" M="$tmp/mod" modules >"$tmp/make.log" 2>&1; then
  tail -n 20 "$tmp/make.log" >&2
  say "building gpio-sim.ko failed (above); build-essential installed?"
  exit 1
fi
unpack_ko "$tmp/mod/gpio-sim.ko" gpio-sim && say "built gpio-sim.ko from linux-source-$series $version"
