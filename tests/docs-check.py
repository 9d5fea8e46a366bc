#!/usr/bin/env python3
"""docs-check.py: the user documentation against facts taken from the code.

    docs-check.py check FACTS_DIR DOCS_DIR
        FACTS_DIR holds what tests/docs.sh gathered: facts.tsv (tests/docs-facts:
        error codes, config keys, connection limits), exit-rtschedd and
        exit-rtschedctl (the exit statuses real runs gave, one "STATUS WHAT" a
        line), help-rtschedd and help-rtschedctl (their --help), and, from a
        run of examples/demo.sh as root, demo.out. DOCS_DIR is a tree with
        README.md, man/ and doc/. Prints "ok - ..." or "FAIL - ..." per check;
        exits 1 if any failed.
    docs-check.py samples DOCS_DIR [DEMO_OUT]
        make docs-samples: rewrites the samples between the "sample: NAME"
        markers from real runs: rtschedd.conf(5)'s --test-config output (of
        $RTSCHEDD, on $top_srcdir/conf/rtschedd.conf and the page's example
        drop-in), and with DEMO_OUT, the output of examples/demo.sh, README.md's
        and rtschedctl(1)'s.

The man pages are read from their source: .SH/.SS headings, .TP/.TQ tags
and the text below each, with font escapes removed. No third-party module."""

import os
import re
import sys

FAILS = []


def ok(msg):
    print("ok - " + msg)


def fail(msg):
    FAILS.append(msg)
    print("FAIL - " + msg)


def expect_same(got, want, what):
    """got and want are sets; both differences are reported."""
    missing, extra = sorted(want - got), sorted(got - want)
    if not missing and not extra:
        ok("%s: %d, as in the code" % (what, len(want)))
        return
    if missing:
        fail("%s: missing %s" % (what, ", ".join(missing)))
    if extra:
        fail("%s: not in the code: %s" % (what, ", ".join(extra)))


# --- troff ---------------------------------------------------------------------
ESCAPES = [("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\(mu", "x"), ("\\(mc", "u"),
           ("\\(bu", "*"), ("\\&", ""), ("\\e", "\\"), ("\\%", ""), ("\\ ", " ")]


def detroff(text):
    text = re.sub(r"\\f[BIRP]", "", text)
    for a, b in ESCAPES:
        text = text.replace(a, b)
    return text


def macro_args(rest):
    """The arguments of a font macro line, quotes honoured."""
    args, cur, quoted, i = [], "", False, 0
    while i < len(rest):
        c = rest[i]
        if c == '"':
            quoted = not quoted
        elif c == " " and not quoted:
            if cur:
                args.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        args.append(cur)
    return args


def line_text(line):
    """The text a source line puts on the page (font macros joined)."""
    m = re.match(r"\.(BR|RB|BI|IB|IR|RI|B|I)(?:\s+|$)(.*)$", line)
    if m:
        args = macro_args(m.group(2))
        sep = " " if m.group(1) in ("B", "I") else ""
        return detroff(sep.join(args))
    if line.startswith("."):
        return ""
    return detroff(line)


class Entry:
    def __init__(self, sh, ss, tag):
        self.sh, self.ss, self.tag, self.body = sh, ss, tag, []

    def text(self):
        return " ".join(self.body)


def man_entries(path):
    """Every .TP/.TQ entry of a man page, with its .SH and .SS heading; tags
    nested in .RS blocks belong to the entry that holds them."""
    entries, sh, ss, cur, depth, want_tag = [], "", "", None, 0, False
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith('.\\"'):
                continue
            word = line.split(" ", 1)[0] if line.startswith(".") else ""
            if word == ".SH" or word == ".SS":
                title = detroff(macro_args(line[4:]) and " ".join(macro_args(line[4:])) or "")
                if word == ".SH":
                    sh, ss = title, ""
                else:
                    ss = title
                cur, depth, want_tag = None, 0, False
                continue
            if word == ".RS":
                depth += 1
            elif word == ".RE":
                depth = max(0, depth - 1)
            elif word in (".TP", ".TQ") and depth == 0:
                want_tag = True
                continue
            elif word in (".PP", ".P", ".LP") and depth == 0:
                cur = None
                continue
            text = line_text(line)
            if want_tag and (text or not line.startswith(".")):
                cur = Entry(sh, ss, text)
                entries.append(cur)
                want_tag = False
                continue
            if cur is not None and text:
                cur.body.append(text)
    return entries


def man_text(path):
    """The page's text, a line per source line, headings included."""
    out = []
    with open(path, encoding="utf-8") as f:
        for l in f:
            l = l.rstrip("\n")
            if l.startswith('.\\"'):
                continue
            if l.startswith(".SH ") or l.startswith(".SS "):
                out.append(detroff(" ".join(macro_args(l[4:]))))
            else:
                out.append(line_text(l))
    return "\n".join(out)


# --- facts ---------------------------------------------------------------------
def read_facts(d):
    errors, keys, limits, kinds = {}, {}, {}, set()
    with open(os.path.join(d, "facts.tsv")) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "error":
                errors[p[1]] = p[2]
            elif p[0] == "key":
                keys.setdefault(p[1], {})[p[2]] = {"type": p[3], "min": p[4], "max": p[5], "def": p[6]}
            elif p[0] == "limit":
                limits[p[1]] = p[2]
            elif p[0] == "kind":
                kinds.add(p[1])
    return errors, keys, limits, kinds


def read_exits(path):
    with open(path) as f:
        return {line.split()[0] for line in f if line.strip()}


# --- the checks ------------------------------------------------------------------
def check_errors(docs, errors):
    code_re = re.compile(r"^[a-z][a-z0-9-]*$")
    # rtschedd-protocol(7): each code with the errno librtsched returns
    ent = [e for e in man_entries(os.path.join(docs, "man/rtschedd-protocol.7")) if e.sh == "ERROR CODES"]
    expect_same({e.tag for e in ent}, set(errors), "rtschedd-protocol(7) ERROR CODES")
    for e in ent:
        m = re.match(r"\((E[A-Z0-9]+)\)", e.text())
        if e.tag in errors and (not m or m.group(1) != errors[e.tag]):
            fail("rtschedd-protocol(7): %s returns %s, the page says %s" %
                 (e.tag, errors[e.tag], m.group(1) if m else "nothing"))
    # rtschedctl(1)
    ent = [e for e in man_entries(os.path.join(docs, "man/rtschedctl.1")) if e.sh == "ERROR CODES"]
    expect_same({e.tag for e in ent}, set(errors), "rtschedctl(1) ERROR CODES")
    # librtsched(3): the table of codes and error numbers under RETURN VALUE
    ent = [e for e in man_entries(os.path.join(docs, "man/librtsched.3"))
           if e.sh == "RETURN VALUE" and code_re.match(e.tag) and re.match(r"-E[A-Z0-9]+", e.text())]
    expect_same({e.tag for e in ent}, set(errors), "librtsched(3) RETURN VALUE codes")
    for e in ent:
        num = re.match(r"-(E[A-Z0-9]+)", e.text()).group(1)
        if e.tag in errors and num != errors[e.tag]:
            fail("librtsched(3): %s returns -%s, the page says -%s" % (e.tag, errors[e.tag], num))


def check_keys(docs, keys):
    ent = man_entries(os.path.join(docs, "man/rtschedd.conf.5"))
    headings = sorted({e.sh for e in ent})
    for kind in keys:
        # "[daemon] SECTION", "[rule NAME] SECTIONS", "[user NAME], [user *] AND [group NAME] SECTIONS"
        titles = [t for t in headings if re.search(r"\[%s[ \]]" % re.escape(kind), t)]
        if len(titles) != 1:
            fail("rtschedd.conf(5): %s section about [%s] (a heading naming \"[%s\")" %
                 ("no" if not titles else "more than one", kind, kind))
            continue
        documented = {}
        for e in ent:
            m = re.match(r"([a-z][a-z0-9-]*) =", e.tag)
            if e.sh == titles[0] and m:
                documented[m.group(1)] = e.text()
        expect_same(set(documented), set(keys[kind]), "rtschedd.conf(5) keys of [%s]" % kind)
        for name, k in keys[kind].items():
            if name not in documented:
                continue
            check_key_text(kind, name, k, documented[name])


def check_key_text(kind, name, k, text):
    where = "rtschedd.conf(5) [%s] %s" % (kind, name)
    if k["type"] == "int":
        m = re.search(r"(-?\d+) to (-?\d+)", text)
        if not m:
            fail("%s: no range (the code takes %s to %s)" % (where, k["min"], k["max"]))
        elif (m.group(1), m.group(2)) != (k["min"], k["max"]):
            fail("%s: the page says %s to %s, the code takes %s to %s" %
                 (where, m.group(1), m.group(2), k["min"], k["max"]))
    m = re.search(r"Default:?\s+([A-Za-z0-9-]+)", text)
    if not m:
        return
    word = m.group(1)
    compare = ((k["type"] == "int" and re.fullmatch(r"-?\d+|off", word)) or
               (k["type"] == "bool" and word in ("yes", "no")) or
               (k["type"] == "choice" and word not in ("the", "not", "none")))
    if compare and word != k["def"]:
        fail("%s: the page's default is %s, the code's %s" % (where, word, k["def"]))


LIMIT_PHRASE = re.compile(r"(\d[\d,]*)\s+(?:connections|clients)\b|(?:connections|clients)\s*\((\d+)\)"
                          r"|(\d+)\s*(?:KiB|MiB) of (?:unread )?repl")


def says(text, want, where, source, what):
    """Each phrase of `want` (numbers from `source`) is in `text`."""
    bad = [w for w in want if w not in text]
    if bad:
        fail("%s: does not say %s (%s)" % (where, "; ".join(bad), source))
    else:
        ok("%s: %s" % (where, what))


def check_limits(docs, limits):
    text = man_text(os.path.join(docs, "man/rtschedd-protocol.7"))
    m = re.search(r"^Connections$(.*?)^Clients$", text, re.S | re.M)
    if not m:
        fail("rtschedd-protocol(7): no \"Connections\" subsection")
        return
    sec = re.sub(r"\s+", " ", m.group(1))
    want = ["At most %s connections" % limits["max-clients"],
            "the last %s are kept for root" % limits["reserved-privileged"],
            "may hold at most %s" % limits["max-per-uid"],
            "accepts at most %s connections" % limits["accept-batch"],
            "more than %s KiB" % limits["queue-pause-kib"],
            "over %s MiB" % limits["max-queued-mib"],
            "While more than %s KiB of replies are unread on all of a user's connections" %
            limits["account-queue-pause-kib"]]
    says(sec, want, "rtschedd-protocol(7) Connections", "control.h", "the limits of control.h")
    # one home for these numbers: elsewhere they drifted (4096 clients, 64 MiB)
    pages = {"man/rtschedd-protocol.7": text[:m.start()] + text[m.end():]}
    for page in ["man/rtschedd.8", "man/librtsched.3", "man/rtschedctl.1", "man/rtschedd.conf.5"]:
        pages[page] = man_text(os.path.join(docs, page))
    for page in user_markdown(docs):
        pages[page] = open(os.path.join(docs, page), encoding="utf-8").read()
    for page, t in pages.items():
        hits = [h.group(0) for h in LIMIT_PHRASE.finditer(re.sub(r"\s+", " ", t))]
        if hits:
            fail("%s states connection limits (%s): refer to rtschedd-protocol(7), Connections" %
                 (page, "; ".join(hits)))


def check_watchdog(docs, limits):
    """rtschedd(8) SAFETY WATCHDOG: how the canaries tick and what counts,
    as watchdog/safety.h has it."""
    text = re.sub(r"\s+", " ", man_text(os.path.join(docs, "man/rtschedd.8")))
    want = ["Each canary ticks every watchdog-threshold / %s on average" % limits["watchdog-ticks-per-threshold"],
            "a tick longer than %s ms counts as starvation" % limits["watchdog-floor-ms"],
            "ticks every %s ms until a window" % limits["watchdog-alert-tick-ms"],
            "Bursts shorter than %s ms never count" % limits["watchdog-floor-ms"],
            "within the last %s x watchdog-threshold" % limits["watchdog-window-factor"]]
    says(text, want, "rtschedd(8) SAFETY WATCHDOG", "watchdog/safety.h",
         "the canary's tick, floor, alert tick and window of watchdog/safety.h")


def check_closer(docs, limits):
    """rtschedd(8) CONTROL SOCKET: the closer's threads per user and in all,
    and when a user's clients stop being read, as sys/closer.h has them."""
    text = re.sub(r"\s+", " ", man_text(os.path.join(docs, "man/rtschedd.8")))
    want = ["at most %s threads close one user's descriptors at once (%s threads in all)" %
            (limits["closer-per-owner"], limits["closer-threads"]),
            "holds %s threads and its own queue" % limits["closer-per-owner"],
            "While %s or more of one user's descriptors wait to be closed" % limits["closer-pending-max"]]
    says(text, want, "rtschedd(8) closer", "sys/closer.h", "the closer's threads and pause of sys/closer.h")


def check_kinds(docs, kinds):
    """Every kind of jitter row, where the pages describe the rows."""
    for page, sh, ss, tag in (("man/rtschedd-protocol.7", "OPERATIONS", "jitter", "kind"),
                              ("man/rtschedctl.1", "COMMANDS", "", "jitter")):
        body = " ".join(e.tag + " " + e.text() for e in man_entries(os.path.join(docs, page))
                        if e.sh == sh and (not ss or e.ss == ss) and e.tag.split(" ")[0] == tag)
        missing = sorted(k for k in kinds if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(k), body))
        if missing:
            fail("%s: %s does not name the jitter row kinds %s (observe/jitter.c)" % (page, tag, ", ".join(missing)))
        else:
            ok("%s: %s names all %d jitter row kinds" % (page, tag, len(kinds)))


def numbers_in(section_text):
    return set(re.findall(r"\b(\d+)\b", section_text))


def check_json_numbers(src, docs):
    """rtschedctl(1) OUTPUT names exactly the keys rtschedctl prints as JSON numbers."""
    code = open(os.path.join(src, "src/ctl/json.c"), encoding="utf-8").read()
    m = re.search(r"static const char \*const nums\[\] = \{(.*?)\};", code, re.S)
    if not m:
        fail("src/ctl/json.c: no nums[] table (numeric_key()): update tests/docs-check.py")
        return
    want = set(re.findall(r'"([a-z0-9_]+)"', m.group(1)))
    text = re.sub(r"\s+", " ", man_text(os.path.join(docs, "man/rtschedctl.1")))
    m = re.search(r"The values of (.*?) are JSON numbers", text)
    got = set(re.findall(r"[a-z0-9_]+", m.group(1))) - {"and"} if m else set()
    expect_same(got, want, "rtschedctl(1) OUTPUT: the JSON number fields (ctl/json.c)")


def check_exits(facts, docs):
    for prog, page in (("rtschedd", "man/rtschedd.8"), ("rtschedctl", "man/rtschedctl.1")):
        codes = read_exits(os.path.join(facts, "exit-" + prog))
        ent = [e for e in man_entries(os.path.join(docs, page)) if e.sh == "EXIT STATUS"]
        expect_same({e.tag for e in ent}, codes, "%s EXIT STATUS (real runs of %s)" % (page, prog))
        helptext = open(os.path.join(facts, "help-" + prog)).read()
        m = re.search(r"Exit codes:(.*?)(?:\.\s|$)", helptext, re.S)
        if not m:
            fail("%s --help names no exit codes" % prog)
        else:
            expect_same(numbers_in(m.group(1)), codes, "%s --help exit codes" % prog)
    # the README and doc/*.md: "exits N" / "exit status N" must be a real one
    all_codes = read_exits(os.path.join(facts, "exit-rtschedd")) | read_exits(os.path.join(facts, "exit-rtschedctl"))
    for page in user_markdown(docs):
        t = open(os.path.join(docs, page), encoding="utf-8").read()
        for n in re.findall(r"\bexit(?:s| status| code)? (\d+)\b", t):
            if n not in all_codes:
                fail("%s: exit %s is not an exit status of rtschedd or rtschedctl" % (page, n))


def user_markdown(docs):
    pages = ["README.md"]
    d = os.path.join(docs, "doc")
    for f in sorted(os.listdir(d)):
        if f.endswith(".md") and f not in DEVELOPER_DOCS:
            pages.append("doc/" + f)
    return pages


# doc/*.md written for the project's developers, not its users
DEVELOPER_DOCS = {"architecture.md", "security-attacks.md"}


def check_issue_numbers(docs):
    pages = user_markdown(docs) + ["man/" + f for f in sorted(os.listdir(os.path.join(docs, "man")))]
    for page in pages:
        t = open(os.path.join(docs, page), encoding="utf-8").read()
        hits = re.findall(r"[Ii]ssue \d+|\(#\d+\)", t)
        if hits:
            fail("%s names the tracker (%s): say what, not which issue" % (page, ", ".join(sorted(set(hits)))))
        else:
            ok("%s: no issue numbers" % page)


# --- what examples/demo.sh printed ----------------------------------------------------
def demo_sections(path):
    """The output of examples/demo.sh, by its "=== TITLE ===" lines."""
    out, cur = {}, None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"=== (.*) ===$", line.rstrip("\n"))
            if m:
                cur = m.group(1)
                out[cur] = []
            elif cur is not None and not line.startswith(("rtschedd:", "demo-worker:", "<")):
                out[cur].append(line.rstrip("\n"))
    return out


def demo_part(sections, prefix):
    for title, lines in sections.items():
        if title.startswith(prefix):
            return lines
    return None


def norm(line):
    return " ".join(line.split())


def check_live(facts, docs):
    demo = os.path.join(facts, "demo.out")
    if not os.path.exists(demo):
        print("# no demo run (not root): the list and jitter columns are not checked")
        return
    sec = demo_sections(demo)
    lst, jit = demo_part(sec, "rtschedctl list"), demo_part(sec, "rtschedctl jitter (")
    if not lst or not jit:
        fail("examples/demo.sh printed no list or no jitter: %s" % ", ".join(sec))
        return
    list_header, jitter_header = norm(lst[0]), norm(jit[0])
    kinds = {l.split()[0] for l in jit[1:] if l.strip() and not l.startswith("measured under")}
    measured = [l for l in jit if l.startswith("measured under")]
    # rtschedctl(1) documents every column under its command
    ent = man_entries(os.path.join(docs, "man/rtschedctl.1"))
    for cmd, header in (("list", list_header), ("jitter", jitter_header)):
        body = " ".join(e.text() for e in ent if e.sh == "COMMANDS" and e.tag.split(" ")[0] == cmd)
        cols = [c for c in header.split() if not re.search(r"(?<![\w.%%-])%s(?![\w.%%-])" % re.escape(c), body)]
        if cols:
            fail("rtschedctl(1) %s: columns of the real output not described: %s" % (cmd, " ".join(cols)))
        else:
            ok("rtschedctl(1) %s: all %d columns of the real output" % (cmd, len(header.split())))
    body = " ".join(e.text() for e in ent if e.sh == "COMMANDS" and e.tag.split(" ")[0] == "jitter")
    missing = [k for k in kinds if k not in body]
    if missing:
        fail("rtschedctl(1) jitter: row kinds of the real output not described: %s" % " ".join(missing))
    # every sample header in the docs is the real one
    pages = user_markdown(docs) + ["man/" + f for f in sorted(os.listdir(os.path.join(docs, "man")))]
    bpf = any(k.startswith("bpf-") for k in kinds)
    for page in pages:
        path = os.path.join(docs, page)
        lines = (man_text(path) if page.startswith("man/") else open(path, encoding="utf-8").read()).split("\n")
        n = 0
        for i, l in enumerate(lines):
            w = l.split()
            if w[:2] == ["TID", "PID"] and norm(l) != list_header:
                fail("%s: a list sample's header is not the real one:\n    %s\n  real:\n    %s" %
                     (page, norm(l), list_header))
            elif w[:2] == ["KIND", "NAME"]:
                if norm(l) != jitter_header:
                    fail("%s: a jitter sample's header is not the real one:\n    %s\n  real:\n    %s" %
                         (page, norm(l), jitter_header))
                for row in lines[i + 1:]:
                    r = row.split()
                    if not r or row.startswith("measured under") or r[0] in ("$", "```", "#"):
                        break
                    if bpf and r[0] not in kinds:
                        fail("%s: a jitter sample shows a %s row, which this build (with BPF) does not "
                             "print (it printed %s)" % (page, r[0], " ".join(sorted(kinds))))
            elif l.startswith("measured under") and measured:
                shape = re.sub(r"preemption \S+?, /dev/cpu_dma_latency [^;]*;", "", measured[0])
                if re.sub(r"preemption \S+?, /dev/cpu_dma_latency [^;]*;", "", l) != shape:
                    fail("%s: a jitter sample's last line is not the real one:\n    %s\n  real:\n    %s" %
                         (page, l, measured[0]))
            else:
                continue
            n += 1
        if n:
            ok("%s: %d sample line%s of list/jitter checked against a real run" % (page, n, "s" * (n > 1)))


# --- rtschedd --test-config in rtschedd.conf(5) ----------------------------------------------
def man_block(path, name):
    """The lines of the .EX block between the page's "sample: NAME" markers, as text."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r'^\.\\" sample: %s\n(.*?)^\.\\" sample: end$' % re.escape(name), text, re.S | re.M)
    if not m:
        return None
    return [detroff(l) for l in m.group(1).rstrip("\n").split("\n") if not l.startswith(".")]


def testconfig_run(docs, src, rtschedd, tmp):
    """rtschedd --test-config on the shipped file plus the EXAMPLES drop-in of
    rtschedd.conf(5), with its paths told as /etc's; None if there is no drop-in."""
    import subprocess
    dropin = man_block(os.path.join(docs, "man/rtschedd.conf.5"), "dropin")
    if dropin is None:
        return None
    name = dropin[0].split("/")[-1] if dropin[0].startswith("# /etc/rtschedd.d/") else "50-example.conf"
    os.makedirs(os.path.join(tmp, "rtschedd.d"), exist_ok=True)
    with open(os.path.join(src, "conf/rtschedd.conf"), encoding="utf-8") as f, \
            open(os.path.join(tmp, "rtschedd.conf"), "w", encoding="utf-8") as g:
        g.write(f.read())
    with open(os.path.join(tmp, "rtschedd.d", name), "w", encoding="utf-8") as g:
        g.write("\n".join(dropin) + "\n")
    r = subprocess.run([rtschedd, "-c", os.path.join(tmp, "rtschedd.conf"), "--test-config",
                        "--scheduler-policy", "fifo", "--scheduler-priority", "10"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("rtschedd --test-config failed on the EXAMPLES drop-in: " + r.stderr)
    return r.stdout.replace(tmp + "/", "/etc/").split("\n")


def testconfig_sample(out):
    """The part of --test-config's output rtschedd.conf(5) shows: the files, the
    start of [daemon], and the sections that take a value from a drop-in."""
    from_dropin, sec = set(), None
    for line in out:
        if re.match(r"\[.*\]$", line):
            sec = line
        elif sec and "# /etc/rtschedd.d/" in line:
            from_dropin.add(sec)
    keep, sec, n = [], None, 0
    for line in out:
        if re.match(r"\[.*\]$", line):
            sec, n = line, 0
            if sec == "[daemon]" or sec in from_dropin:
                keep += ([""] if keep and keep[-1] != "" else []) + [line]
        elif sec is None:
            keep.append(line)
        elif sec == "[daemon]":
            n += 1
            keep += [line] if n <= 6 else ["..."] if n == 7 else []
        elif sec in from_dropin and line:
            keep.append(line)
    while keep and keep[-1] == "":
        keep.pop()
    return keep


def check_testconfig(docs, src, rtschedd, tmp):
    sample = man_block(os.path.join(docs, "man/rtschedd.conf.5"), "testconfig")
    if sample is None:
        fail("rtschedd.conf(5): no --test-config sample (sample: testconfig)")
        return
    real = testconfig_run(docs, src, rtschedd, tmp)
    if real is None:
        fail("rtschedd.conf(5): no EXAMPLES drop-in (sample: dropin)")
        return
    bad = [l for l in sample if l and l != "..." and l not in real]
    if bad:
        fail("rtschedd.conf(5): the --test-config sample is not what rtschedd prints (make docs-samples):\n    %s" %
             "\n    ".join(bad[:5]))
    else:
        ok("rtschedd.conf(5): the --test-config sample, %d lines, as rtschedd prints it" % len(sample))


# --- the drop-ins the user docs tell people to write ----------------------------------------
def doc_dropins(docs):
    """(page, path, text) of every drop-in README.md and doc/*.md write under
    /etc/rtschedd.d: a `cat >PATH <<'EOF'` here-document or a `printf 'TEXT' >PATH`."""
    found = []
    for page in user_markdown(docs):
        text = open(os.path.join(docs, page), encoding="utf-8").read()
        for m in re.finditer(r"^cat >(/etc/rtschedd\.d/\S+) <<'EOF'\n(.*?)^EOF$", text, re.S | re.M):
            found.append((page, m.group(1), m.group(2)))
        for m in re.finditer(r"printf '([^']*)' >(/etc/rtschedd\.d/[^\s;&|]+)", text):
            found.append((page, m.group(2), m.group(1).replace("\\n", "\n")))
    return found


def check_dropins(docs, src, rtschedd, tmp):
    """Each drop-in the quick-starts write, beside the shipped rtschedd.conf,
    passes rtschedd --test-config: a renamed key or a changed range breaks the
    docs' commands, not only their reference pages."""
    import subprocess
    found = doc_dropins(docs)
    if not found:
        fail("README.md and doc/*.md: no drop-in written to /etc/rtschedd.d found (update doc_dropins)")
        return
    for i, (page, path, body) in enumerate(found):
        d = os.path.join(tmp, "dropin-%d" % i)
        os.makedirs(os.path.join(d, "rtschedd.d"), exist_ok=True)
        with open(os.path.join(src, "conf/rtschedd.conf"), encoding="utf-8") as f, \
                open(os.path.join(d, "rtschedd.conf"), "w", encoding="utf-8") as g:
            g.write(f.read())
        with open(os.path.join(d, "rtschedd.d", os.path.basename(path)), "w", encoding="utf-8") as g:
            g.write(body)
        r = subprocess.run([rtschedd, "-c", os.path.join(d, "rtschedd.conf"), "--test-config"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail("%s: the drop-in %s fails rtschedd --test-config:\n    %s" %
                 (page, path, r.stderr.replace(d + "/", "/etc/").strip().replace("\n", "\n    ")))
        else:
            ok("%s: the drop-in %s passes rtschedd --test-config" % (page, path))


# --- make docs-samples ------------------------------------------------------------------
def troff_escape(line):
    return line.replace("\\", "\\e").replace("-", "\\-").replace("...", "\\&...")


def replace_block(text, marker, lines, escape):
    """text with the lines between MARKER and the next "sample: end" marker
    replaced, keeping the fences (``` or .EX/.EE) they hold; None if no marker."""
    start, end = (('<!-- sample: %s -->', '<!-- sample: end -->') if not escape
                  else ('.\\" sample: %s', '.\\" sample: end'))
    m = re.search(re.escape(start % marker) + r"\n(.*?)" + re.escape(end), text, re.S)
    if not m:
        return None
    old = m.group(1).rstrip("\n").split("\n")
    head = [l for l in old[:1] if l.startswith("```") or l == ".EX"]
    tail = [l for l in old[-1:] if l.startswith("```") or l == ".EE"]
    body = [troff_escape(l) if escape else l for l in lines]
    return text[:m.start(1)] + "\n".join(head + body + tail) + "\n" + text[m.end(1):]


def write_samples(docs, src, rtschedd, demo):
    """make docs-samples: the samples of the docs from real runs."""
    import tempfile
    edits = []
    with tempfile.TemporaryDirectory() as tmp:
        edits.append(("man/rtschedd.conf.5", "testconfig", testconfig_sample(testconfig_run(docs, src, rtschedd, tmp)),
                      True))
    if demo:
        sec = demo_sections(demo)
        lst, jit = demo_part(sec, "rtschedctl list"), demo_part(sec, "rtschedctl jitter (")
        hist = demo_part(sec, "rtschedctl jitter --histogram")
        if not lst or not jit or not hist:
            sys.exit("docs-check.py: the demo printed no list, jitter or histogram: %s" % ", ".join(sec))
        shown = (["$ rtschedctl list"] + lst + ["$ rtschedctl jitter"] + [l for l in jit if l.strip()] +
                 ["$ rtschedctl jitter --histogram demo-worker"] + [l for l in hist if l.strip()])
        edits.append(("README.md", "demo", shown, False))
        edits.append(("man/rtschedctl.1", "demo", ["$ rtschedctl list"] + lst, True))
    for page, marker, lines, escape in edits:
        path = os.path.join(docs, page)
        text = open(path, encoding="utf-8").read()
        new = replace_block(text, marker, lines, escape)
        if new is None:
            sys.exit("docs-check.py: %s has no sample marker %s" % (page, marker))
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
        print("%s: sample %s, %d lines" % (page, marker, len(lines)))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "samples" and len(sys.argv) in (3, 4):
        write_samples(sys.argv[2], os.environ["top_srcdir"], os.environ["RTSCHEDD"],
                      sys.argv[3] if len(sys.argv) == 4 else None)
        return
    if mode != "check" or len(sys.argv) != 4:
        sys.exit(__doc__)
    facts, docs = sys.argv[2], sys.argv[3]
    src = os.environ.get("top_srcdir", docs)
    errors, keys, limits, kinds = read_facts(facts)
    check_errors(docs, errors)
    check_keys(docs, keys)
    check_limits(docs, limits)
    check_watchdog(docs, limits)
    check_closer(docs, limits)
    check_kinds(docs, kinds)
    check_exits(facts, docs)
    check_json_numbers(src, docs)
    check_issue_numbers(docs)
    if os.environ.get("RTSCHEDD"):
        check_testconfig(docs, src, os.environ["RTSCHEDD"], os.path.join(facts, "testconfig"))
        check_dropins(docs, src, os.environ["RTSCHEDD"], os.path.join(facts, "dropins"))
    check_live(facts, docs)
    print("%d failed" % len(FAILS))
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
