#!/bin/sh
# camclass — checks of the systemd units and the udev rule (suite 'app'):
#   1. both configured units (camclass.service, camclass@.service) have the directives of
#      a watchdog-supervised, device-confined service (the list below), a restart policy that
#      never gives up, and the same hardening (one source, systemd/camclass.service.in); the
#      template binds to dev-%i.device and runs on /dev/%I with the shared config;
#   2. `systemd-analyze verify` passes with no message at all (it exits 0 on unknown keys and
#      bad values, only warning, so any output is a failure), for camclass.service and for the
#      template's instances camclass@video0 and a /dev/v4l/by-id/ one (the template alone in a
#      directory, the instance named on the command line); a template with a broken specifier
#      must give a message (control);
#   3. `systemd-analyze security --offline=true` rates the exposure of camclass.service and of
#      camclass@video0 <= 2.5, and rates a unit without hardening > 2.5 (so the parsing cannot
#      pass by accident);
#   4. config.json is valid JSON; `meson install` would put both units in a systemd unit dir, the
#      udev rule in a udev rules dir and the config where ExecStart's --config points;
#   5. the udev rule: its syntax and what it tags (udev_rules_check.py; no udevadm verify before
#      systemd 254, and udev is not installed where the tests run);
#   6. the network drop-in for --serve/--mqtt (systemd/network.conf, docs/SERVE.md) on both units:
#      verify stays quiet, systemd-analyze reads it (PrivateNetwork= rated open), the deny list
#      stays (only the allowed addresses), exposure still <= 2.5, and it installs as an example;
#      a drop-in that resets IPAddressDeny= must be caught (control).
# Usage: test_systemd.sh UNIT TEMPLATE_UNIT UDEV_RULES UDEV_RULES_CHECK CONFIG_JSON CAMCLASS_BINARY
#        BUILD_ROOT NETWORK_DROPIN
set -u
unit=$1 template=$2 rules=$3 rules_check=$4 config=$5 binary=$6 buildroot=$7 dropin=$8
max_exposure=2.5
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

command -v systemd-analyze >/dev/null || { echo "FAIL: systemd-analyze not found (apt-get install systemd; tools/setup.sh does)"; exit 1; }
for f in "$unit" "$template" "$rules" "$rules_check" "$dropin"; do
    [ -f "$f" ] || { echo "FAIL: no file at $f"; exit 1; }
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# --- 1. The directives -----------------------------------------------------------------------
for u in "$unit" "$template"; do
    for line in 'Type=notify' 'NotifyAccess=main' 'WatchdogSec=' 'Restart=on-failure' 'RestartSec=' \
        'DynamicUser=yes' 'User=camclass' 'SupplementaryGroups=video render' 'DevicePolicy=closed' \
        'DeviceAllow=char-video4linux rw' 'DeviceAllow=char-drm rw' 'ProtectSystem=strict' \
        'ProtectHome=yes' 'PrivateTmp=yes' 'NoNewPrivileges=yes' 'PrivateNetwork=yes' \
        'RestrictAddressFamilies=AF_UNIX' 'CapabilityBoundingSet=' 'SystemCallFilter=@system-service' \
        'SystemCallArchitectures=native' 'CacheDirectory=camclass' 'Environment=XDG_CACHE_HOME=%C' \
        'MemoryDenyWriteExecute=no'; do
        grep -q "^$line" "$u" || fail "$(basename "$u") lacks '$line'"
    done
    if grep -q '@[a-z_]*@' "$u"; then fail "unsubstituted @...@ left in $(basename "$u")"; fi
    # The restart policy never gives up: no start rate limit (a camera plugged in late is still
    # used), a fixed pause between tries, no burst limit that would end the retries.
    grep -q '^StartLimitIntervalSec=0$' "$u" ||
        fail "$(basename "$u") lacks 'StartLimitIntervalSec=0' (a start rate limit gives up for good)"
    if grep -q '^StartLimitBurst=' "$u"; then
        fail "$(basename "$u") sets StartLimitBurst= (with no interval it means nothing; drop it)"
    fi
done
execstart=$(sed -n 's/^ExecStart=//p' "$unit")
case "$execstart" in
/*/camclass\ --headless\ --log\ -\ --config\ /*/camclass/config.json) ok "ExecStart=$execstart" ;;
*) fail "ExecStart is '$execstart'" ;;
esac
for line in 'SyslogIdentifier=camclass' 'WantedBy=multi-user.target'; do
    grep -qx "$line" "$unit" || fail "camclass.service lacks '$line'"
done
# The template: one camera, the instance's, on the command line after the shared config (the
# command line wins); stops with its device, started by it once enabled.
t_execstart=$(sed -n 's/^ExecStart=//p' "$template")
case "$t_execstart" in
"$execstart --camera /dev/%I") ok "template ExecStart=$t_execstart" ;;
*) fail "template ExecStart is '$t_execstart', not camclass.service's + ' --camera /dev/%I'" ;;
esac
for line in 'BindsTo=dev-%i.device' 'After=dev-%i.device' 'SyslogIdentifier=camclass@%i' \
    'WantedBy=dev-%i.device'; do
    grep -qx "$line" "$template" || fail "camclass@.service lacks '$line'"
done
# The same hardening in both: the units differ only in the lines one source sets per unit.
same() { grep -v -e '^#' -e '^$' -e '^Description=' -e '^ExecStart=' -e '^SyslogIdentifier=' \
    -e '^BindsTo=' -e '^After=' -e '^WantedBy=' "$1"; }
same "$unit" >"$tmp/unit.same"
same "$template" >"$tmp/template.same"
if cmp -s "$tmp/unit.same" "$tmp/template.same"; then
    ok "camclass.service and camclass@.service differ only in their per-unit lines"
else
    fail "camclass.service and camclass@.service differ in other lines:"
    diff "$tmp/unit.same" "$tmp/template.same" | sed 's/^/    /'
fi

# --- 2. systemd-analyze verify ---------------------------------------------------------------
# verify checks that ExecStart's program exists: the installed path does not exist at test time,
# so the copy runs the camclass built here, or /bin/true while app/camclass is not built yet.
if [ -x "$binary" ]; then
    exe=$binary
else
    exe=/bin/true
    echo "note: $binary not built; verifying with ExecStart=/bin/true (same arguments)"
fi
sed "s#^ExecStart=[^ ]*#ExecStart=$exe#" "$unit" >"$tmp/camclass.service"
# The template alone in its own directory, as it is installed; verify and security load the
# instance named on their command line from it, %i and %I filled in.
mkdir "$tmp/template"
sed "s#^ExecStart=[^ ]*#ExecStart=$exe#" "$template" >"$tmp/template/camclass@.service"
byid='camclass@v4l-by\x2did-usb\x2dCam\x2dvideo\x2dindex0.service' # /dev/v4l/by-id/usb-Cam-video-index0
# verify DIR UNIT: no message at all, exit 0. --man=no: Documentation=man:camclass(1) names the
# page `meson install` puts in place, which is not installed where the tests run. A BindsTo= on
# a device that is not there is no message: device units are loaded, only never active.
verify() {
    out=$(cd "$1" && systemd-analyze verify --man=no "./$2" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && [ -z "$out" ]; then
        ok "systemd-analyze verify $2 (ExecStart=$exe)"
    else
        fail "systemd-analyze verify $2: exit $rc"
        printf '%s\n' "$out" | sed 's/^/    /'
    fi
}
verify "$tmp" camclass.service
verify "$tmp/template" camclass@video0.service
verify "$tmp/template" "$byid"
# Control: an instance of a template with an unknown specifier must not verify quietly (so the
# instance is really read from the template).
mkdir "$tmp/badtemplate"
sed 's#/dev/%I#/dev/%Q#' "$tmp/template/camclass@.service" >"$tmp/badtemplate/camclass@.service"
if [ -n "$(cd "$tmp/badtemplate" && systemd-analyze verify --man=no ./camclass@video0.service 2>&1)" ]; then
    ok "control: verify reports a template instance with a bad specifier"
else
    fail "control: verify is quiet on a template with '/dev/%Q' (instances not checked)"
fi

# --- 3. systemd-analyze security -------------------------------------------------------------
exposure_of() { # unit file -> "N.N" (empty when the line is missing)
    (cd "$(dirname "$1")" && systemd-analyze security --offline=true --no-pager "./$(basename "$1")" 2>&1) |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9]*\.[0-9]\).*/\1/p'
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
for u in "$tmp/camclass.service" "$tmp/template/camclass@video0.service"; do
    d=$(dirname "$u") n=$(basename "$u")
    exposure=$(exposure_of "$u")
    if [ -z "$exposure" ]; then
        fail "$n: no 'Overall exposure level' in systemd-analyze security's output:"
        (cd "$d" && systemd-analyze security --offline=true --no-pager "./$n" 2>&1) | tail -5
    elif le "$exposure" "$max_exposure"; then
        ok "$n: exposure $exposure <= $max_exposure"
    else
        fail "$n: exposure $exposure > $max_exposure"
        (cd "$d" && systemd-analyze security --offline=true --no-pager "./$n" 2>&1) | grep '✗'
    fi
    # The same bound through systemd-analyze's own check (--threshold is exposure x 10).
    (cd "$d" && systemd-analyze security --offline=true --threshold=25 "./$n" >/dev/null 2>&1) ||
        fail "$n: systemd-analyze security --threshold=25 fails"
done
# Control: the unit without its hardening must rate above the bound.
mkdir "$tmp/bare"
printf '[Service]\nType=notify\nExecStart=%s\n' "$exe" >"$tmp/bare/camclass.service"
bare=$(exposure_of "$tmp/bare/camclass.service")
if [ -n "$bare" ] && ! le "$bare" "$max_exposure"; then
    ok "control: unhardened unit rates $bare"
else
    fail "control: unhardened unit rates '$bare' (parser or systemd-analyze broken)"
fi

# --- 4. config.json and the install layout ---------------------------------------------------
if python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert isinstance(d, dict)' "$config"; then
    ok "config.json is a JSON object"
else
    fail "config.json is not a JSON object"
fi
installed=$(meson introspect --installed "$buildroot" 2>&1)
dest_of() { # the end of a source path -> where `meson install` puts it (empty when nowhere)
    printf '%s' "$installed" | python3 -c '
import json, sys
for src, dst in json.load(sys.stdin).items():
    if src.endswith(sys.argv[1]): print(dst)' "$1"
}
unit_dest=$(dest_of /camclass.service)
template_dest=$(dest_of /camclass@.service)
rules_dest=$(dest_of /70-camclass.rules)
config_dest=$(dest_of systemd/config.json)
case "$unit_dest" in
*/lib/systemd/system/camclass.service) ok "installs $unit_dest" ;;
*) fail "unit installs to '$unit_dest'" ;;
esac
if [ -n "$unit_dest" ] && [ "$template_dest" = "$(dirname "$unit_dest")/camclass@.service" ]; then
    ok "installs $template_dest"
else
    fail "template installs to '$template_dest', not beside camclass.service ('$unit_dest')"
fi
# udev reads /usr/lib/udev/rules.d and /usr/local/lib/udev/rules.d (and /etc, /run).
case "$rules_dest" in
*/lib/udev/rules.d/70-camclass.rules) ok "installs $rules_dest" ;;
*) fail "udev rule installs to '$rules_dest'" ;;
esac
case "$execstart" in
*"--config $config_dest") ok "installs config to $config_dest (ExecStart's --config)" ;;
*) fail "config installs to '$config_dest', ExecStart reads another: $execstart" ;;
esac

# --- 5. The udev rule -------------------------------------------------------------------------
if out=$(python3 "$rules_check" "$rules" 2>&1); then
    printf '%s\n' "$out"
else
    printf '%s\n' "$out"
    fail "udev rule $(basename "$rules") (udev_rules_check.py)"
fi

# --- 6. The network drop-in ------------------------------------------------------------------
# Each unit again, in a directory of its own with the drop-in in UNIT.d/ beside it, which is
# where verify and security --offline read drop-ins from.
security_of() { # dir unit -> systemd-analyze security's table
    (cd "$1" && systemd-analyze security --offline=true --no-pager "./$2" 2>&1)
}
# with_dropin NAME UNIT_FILE DROPIN_FILE INSTANCE -> the directory holding them
with_dropin() {
    d="$tmp/net-$1"
    mkdir -p "$d/$(basename "$2").d"
    cp "$2" "$d/"
    cp "$3" "$d/$(basename "$2").d/network.conf"
    echo "$d"
}
# net_checks DIR INSTANCE: prints the failures, nothing when the drop-in does what it says
net_checks() {
    out=$(cd "$1" && systemd-analyze verify --man=no "./$2" 2>&1) ||
        echo "systemd-analyze verify exits $?"
    [ -z "$out" ] || echo "systemd-analyze verify says: $out"
    table=$(security_of "$1" "$2")
    printf '%s\n' "$table" | grep -q '✗ PrivateNetwork=' ||
        echo "PrivateNetwork= is not rated open: the drop-in was not read"
    printf '%s\n' "$table" | grep -q '✗ RestrictAddressFamilies=~AF_(INET|INET6)' ||
        echo "AF_INET is not allowed: the service could not open a socket"
    printf '%s\n' "$table" | grep -q 'IPAddressDeny=.*defines IP address allow list' ||
        echo "no IP address allow list: $(printf '%s\n' "$table" | grep 'IPAddressDeny=')"
    e=$(printf '%s\n' "$table" |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9]*\.[0-9]\).*/\1/p')
    if [ -z "$e" ] || ! le "$e" "$max_exposure"; then
        echo "exposure '$e' > $max_exposure"
    fi
}
for pair in "camclass.service:$tmp/camclass.service" \
    "camclass@video0.service:$tmp/template/camclass@.service"; do
    inst=${pair%%:*} file=${pair#*:}
    d=$(with_dropin "$inst" "$file" "$dropin")
    problems=$(net_checks "$d" "$inst")
    if [ -z "$problems" ]; then
        ok "$inst with network.conf: verifies, network open to the allow list only," \
            "exposure $(exposure_of "$d/$inst")"
    else
        fail "$inst with network.conf:"
        printf '%s\n' "$problems" | sed 's/^/    /'
    fi
done
# Control: the drop-in as docs/SERVE.md once had it, with IPAddressDeny= reset (every address
# allowed), must be caught.
sed 's/^IPAddressAllow=.*/IPAddressDeny=\n&/' "$dropin" >"$tmp/reset.conf"
d=$(with_dropin control "$tmp/camclass.service" "$tmp/reset.conf")
if net_checks "$d" camclass.service | grep -q 'no IP address allow list'; then
    ok "control: a drop-in that resets IPAddressDeny= is caught"
else
    fail "control: a drop-in that resets IPAddressDeny= passes"
fi
dropin_dest=$(dest_of systemd/network.conf)
case "$dropin_dest" in
*/share/doc/camclass/examples/network.conf) ok "installs $dropin_dest" ;;
*) fail "network.conf installs to '$dropin_dest'" ;;
esac

[ $fails -eq 0 ] && echo "all systemd checks passed" || echo "$fails systemd check(s) failed"
[ $fails -eq 0 ]
