#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Parses memreclaimd's Prometheus metrics with prometheus_client's text
parser (Debian's python3-prometheus-client) and checks every family and
series: the families are exactly those expected, each with its HELP and
TYPE; the daemon's series are there; each group named with --cgroup has
every per-group series (one per reclaim reason where there are reasons),
and no other group has any; values are numbers in their ranges. With
--value NAME,CGROUP,VALUE a group's sample must have that value; with
--pressure CGROUP that group must have both pressure series (some, full)
and the others none.

    memreclaimd-metrics-check.py (--file PATH | --url URL)
                                 [--cgroup PATH]... [--value N,C,V]...
                                 [--pressure PATH]...
"""
import argparse
import math
import sys
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

P = "memreclaimd_"
REASONS = {"margin", "requested", "soft", "proactive"}
# The proactive controller's pauses, by their own reasons.
PAUSES = {"pressure", "refaults", "io", "external"}

# family (as the parser names it: counters without _total) -> type,
# labels of its samples besides cgroup, per-group or not.
DAEMON = {
    P + "build_info": ("gauge", [{"version", "library_version"}]),
    P + "groups": ("gauge", [set()]),
    P + "groups_refused": ("gauge", [set()]),
    P + "config_reloads": ("counter", [{"result"}] * 2),
    P + "config_last_reload_success_timestamp_seconds": ("gauge", [set()]),
    P + "cpu_seconds": ("counter", [{"mode"}] * 2),
}
GROUP = {
    P + "group_usage_bytes": "gauge",
    P + "group_limit_bytes": "gauge",
    P + "group_limit_hits": "counter",
    P + "group_margin_bytes": "gauge",
    P + "group_hysteresis_bytes": "gauge",
    P + "group_margin_adaptive": "gauge",
    P + "group_margin_sized_bytes": "gauge",
    P + "group_margin_strength_ratio": "gauge",
    P + "group_charge_rate_bytes_per_second": "gauge",
    P + "group_proactive_enabled": "gauge",
    P + "group_proactive_target_bytes": "gauge",
    P + "group_proactive_floor_bytes": "gauge",
    P + "group_proactive_stall_seconds": "gauge",
    P + "group_proactive_refault_ratio": "gauge",
    P + "group_proactive_external_high_changes": "counter",
}
# family -> (type, the reasons of its samples)
GROUP_BY_REASON = {
    P + "group_reclaim_calls": ("counter", REASONS),
    P + "group_reclaim_empty_calls": ("counter", REASONS),
    P + "group_reclaim_asked_bytes": ("counter", REASONS),
    P + "group_reclaim_freed_bytes": ("counter", REASONS),
    P + "group_reclaim_seconds": ("counter", REASONS),
    P + "group_proactive_pauses": ("counter", PAUSES),
}
# Only for groups whose kernel reports pressure (cgroup v2, or v1 with a
# cgroup2 twin); each sample has kind some or full.
PRESSURE = P + "group_pressure_stalled_seconds"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file")
    ap.add_argument("--url")
    ap.add_argument("--cgroup", action="append", default=[])
    ap.add_argument("--value", action="append", default=[])
    ap.add_argument("--pressure", action="append", default=[])
    a = ap.parse_args()
    if a.file:
        with open(a.file, encoding="utf-8") as f:
            text = f.read()
    else:
        try:
            with urllib.request.urlopen(a.url, timeout=10) as r:
                ctype = r.headers.get("Content-Type", "")
                if not ctype.startswith("text/plain; version=0.0.4"):
                    fail("Content-Type %r" % ctype)
                text = r.read().decode("utf-8")
        except urllib.error.URLError as e:
            fail("%s: %s" % (a.url, e))
    for line in text.splitlines():
        if line.startswith("# HELP ") and len(line.split(" ", 3)) < 4:
            fail("HELP without text: " + line)
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    want = set(DAEMON) | set(GROUP) | set(GROUP_BY_REASON) | {PRESSURE}
    if set(fams) != want:
        fail("families: missing %s, unexpected %s" %
             (sorted(want - set(fams)), sorted(set(fams) - want)))
    for name, (typ, labelsets) in DAEMON.items():
        f = fams[name]
        if f.type != typ or not f.documentation:
            fail("%s: type %s, help %r" % (name, f.type, f.documentation))
        got = [set(s.labels) for s in f.samples]
        if got != labelsets:
            fail("%s: labels %s" % (name, got))
    groups = set(a.cgroup)
    samples = {}
    by_reason = [(n, t) for n, (t, _) in GROUP_BY_REASON.items()]
    for name, typ in list(GROUP.items()) + by_reason:
        f = fams[name]
        if f.type != typ or not f.documentation:
            fail("%s: type %s, help %r" % (name, f.type, f.documentation))
        for s in f.samples:
            if typ == "counter" and not s.name.endswith("_total"):
                fail("%s: counter sample %s" % (name, s.name))
            cg = s.labels.get("cgroup")
            if cg not in groups:
                fail("%s: a series for %r, not a group kept" % (name, cg))
            key = (name, cg, s.labels.get("reason"))
            if key in samples:
                fail("%s: two series %s" % (name, key))
            if math.isnan(s.value) or s.value < 0:
                fail("%s %s: %r" % (name, key, s.value))
            samples[key] = s.value
        for cg in groups:
            if name in GROUP_BY_REASON:
                have = {k[2] for k in samples if k[:2] == (name, cg)}
                if have != GROUP_BY_REASON[name][1]:
                    fail("%s{cgroup=%r}: reasons %s" % (name, cg, have))
            elif (name, cg, None) not in samples:
                fail("%s{cgroup=%r}: no series" % (name, cg))
    f = fams[PRESSURE]
    if f.type != "counter" or not f.documentation:
        fail("%s: type %s" % (PRESSURE, f.type))
    kinds = {}
    for s in f.samples:
        if s.labels.get("cgroup") not in groups or \
                s.labels.get("kind") not in ("some", "full") or \
                s.value < 0:
            fail("%s: labels %s, value %r" % (PRESSURE, s.labels, s.value))
        kinds.setdefault(s.labels["cgroup"], set()).add(s.labels["kind"])
    want = {cg: {"some", "full"} for cg in a.pressure}
    if kinds != want:
        fail("%s: series %s, want %s" % (PRESSURE, kinds, want))
    for cg in groups:
        r = samples[(P + "group_margin_strength_ratio", cg, None)]
        a_ = samples[(P + "group_margin_adaptive", cg, None)]
        if not 0 <= r <= 1 or a_ not in (0, 1):
            fail("%s: strength %r, adaptive %r" % (cg, r, a_))
        r = samples[(P + "group_proactive_refault_ratio", cg, None)]
        e = samples[(P + "group_proactive_enabled", cg, None)]
        if not 0 <= r <= 1 or e not in (0, 1, 2):
            fail("%s: refault ratio %r, proactive %r" % (cg, r, e))
    for v in a.value:
        name, cg, val = v.split(",")
        got = samples.get((P + name, cg, None))
        if got is None or got != float(val):
            fail("%s{cgroup=%r} = %r, want %s" % (name, cg, got, val))
    print("ok: %d families, %d groups, %d group series, %d pressure series"
          % (len(fams), len(groups), len(samples), len(f.samples)))


main()
