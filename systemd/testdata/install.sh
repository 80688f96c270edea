#!/usr/bin/env bash
# Installs, upgrades, removes and purges a quotesync .deb with the real dpkg
# and adduser, in a throwaway copy of this machine's root: an overlay whose
# writes go to a tmpfs, inside a private mount namespace, so nothing here
# reaches the host. Run by systemd/deb_test.go as root:
#
#   unshare --mount --fork bash install.sh PACKAGE.deb SCRATCH_DIR
#
# dpkg's own output goes to stderr; stdout carries one "probe: value" line per
# observation, which the test compares with what it wants. systemctl is
# replaced by a stub that logs its arguments, and /run/systemd/system exists,
# so the maintainer scripts believe systemd is running and the log shows what
# they would have asked it to do.
set -euo pipefail

deb=$1
base=$2
[[ -f $deb && -d $base ]] || { echo "usage: install.sh PACKAGE.deb SCRATCH_DIR" >&2; exit 2; }
# Mounts must not propagate to the host (unshare --mount makes them private;
# make sure).
mount --make-rprivate /

mount -t tmpfs -o mode=0755 quotesync-test "$base"
mkdir "$base/upper" "$base/work" "$base/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$base/upper,workdir=$base/work" "$base/root"
r=$base/root
[[ $(findmnt -no FSTYPE "$r") == overlay ]] || { echo "install.sh: $r is not an overlay; stopping" >&2; exit 1; }
[[ -f $r/var/lib/dpkg/status && -x $r/usr/bin/dpkg ]] || { echo "install.sh: the overlay of / has no dpkg database (/var or /usr on another file system?); this check needs them on /" >&2; exit 1; }
mount --bind /proc "$r/proc"
mount --bind /dev "$r/dev"
mount -t tmpfs tmpfs "$r/run"
mount -t tmpfs tmpfs "$r/tmp"
mkdir -p "$r/run/systemd/system"
cat >"$r/usr/bin/systemctl" <<'STUB'
#!/bin/sh
echo "$*" >>/tmp/systemctl.log
STUB
chmod 0755 "$r/usr/bin/systemctl"
cp "$deb" "$r/tmp/quotesync.deb"

in_root() { chroot "$r" "$@"; }
probe() { printf '%s: %s\n' "$1" "$2"; }
# calls prints what the maintainer scripts asked systemctl since the last call.
calls() {
	local log=$r/tmp/systemctl.log
	if [[ -s $log ]]; then paste -sd';' "$log"; else echo none; fi
	rm -f "$log"
}
mode_of() { in_root stat -c '%a %U %G' "$1" 2>/dev/null || echo absent; }
user_of() { in_root getent passwd quotesync | cut -d: -f1,6,7 || echo absent; }
group_of() { in_root getent group quotesync | cut -d: -f1 || echo absent; }
enabled() { [[ -L $r/etc/systemd/system/multi-user.target.wants/${1:-quotesync.service} ]] && echo yes || echo no; }

in_root getent passwd quotesync >/dev/null && { echo "install.sh: user quotesync exists before the install" >&2; exit 1; }

in_root dpkg -i /tmp/quotesync.deb >&2
probe install.systemctl "$(calls)"
probe install.status "$(in_root dpkg-query -W -f='${Status}' quotesync)"
probe install.conffiles "$(in_root dpkg-query -W -f='${Conffiles}' quotesync | awk 'NF {print $1}' | paste -sd' ')"
probe install.user "$(user_of)"
probe install.group "$(group_of)"
probe install.config "$(mode_of /etc/quotesync/config.yaml)"
probe install.credentials "$(mode_of /etc/quotesync/credentials)"
probe install.unit "$(mode_of /usr/lib/systemd/system/quotesync.service)"
probe install.binary "$(mode_of /usr/bin/quotesync)"
probe install.enabled "$(enabled)"
probe install.runs "$(in_root /usr/bin/quotesync version >/dev/null 2>&1 && echo yes || echo no)"
# The installed unit, as installed: its ExecStart= binary exists now.
out=$(in_root systemd-analyze verify /usr/lib/systemd/system/quotesync.service 2>&1) && [[ -z $out ]] && out=clean
probe install.verify "${out//$'\n'/ | }"
probe install.sites "$(mode_of /etc/quotesync/sites)"
probe install.template "$(mode_of /usr/lib/systemd/system/quotesync@.service)"
out=$(in_root systemd-analyze verify quotesync@north.service 2>&1) && [[ -z $out ]] && out=clean
probe install.verify-site "${out//$'\n'/ | }"

# Same version again: dpkg runs the upgrade path (postinst configure OLD).
in_root dpkg -i /tmp/quotesync.deb >&2
probe upgrade.systemctl "$(calls)"

# The administrator's steps, then remove: the secrets and the config stay.
in_root install -m 0600 /dev/null /etc/quotesync/credentials/token
mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
ln -s /usr/lib/systemd/system/quotesync.service "$r/etc/systemd/system/multi-user.target.wants/quotesync.service"
# A site of the template: its secrets, its file, its enablement link.
in_root install -d -m 0700 /etc/quotesync/sites/north
in_root install -m 0600 /dev/null /etc/quotesync/sites/north/token
in_root install -m 0640 -g quotesync /dev/null /etc/quotesync/sites/north.yaml
ln -s /usr/lib/systemd/system/quotesync@.service "$r/etc/systemd/system/multi-user.target.wants/quotesync@north.service"
in_root dpkg -r quotesync >&2
probe remove.systemctl "$(calls)"
probe remove.status "$(in_root dpkg-query -W -f='${Status}' quotesync)"
probe remove.binary "$(mode_of /usr/bin/quotesync)"
probe remove.config "$(mode_of /etc/quotesync/config.yaml)"
probe remove.token "$(mode_of /etc/quotesync/credentials/token)"
probe remove.user "$(user_of)"
probe remove.site-token "$(mode_of /etc/quotesync/sites/north/token)"
probe remove.site-config "$(mode_of /etc/quotesync/sites/north.yaml)"

in_root dpkg -P quotesync >&2
probe purge.systemctl "$(calls)"
probe purge.etc "$(mode_of /etc/quotesync)"
probe purge.enabled "$(enabled)"
probe purge.enabled-site "$(enabled quotesync@north.service)"
probe purge.user "$(user_of)"
probe purge.group "$(group_of)"
