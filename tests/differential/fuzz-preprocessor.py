#!/usr/bin/python3
"""Differential fuzzing of the built-in preprocessor against gcc's cpp: random small macro
programs (object- and function-like, #, ##, variadic, nested calls), compared token by token.

With MODE "if": random #if expressions (every operator, literals with suffixes, char
constants, defined, ?:), compared as taken / not taken / error.

usage: tests/differential/fuzz-preprocessor.py TOOL SEED COUNT [macros|if]
       (TOOL: build/examples/example_dts_cpp)
"""
import os
import random
import re
import subprocess
import sys
import tempfile
TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_][A-Za-z0-9_]*|[0-9.][A-Za-z0-9_.]*|\S')
names = ["A","B","C","F","G","H","x","y"]
def body(r, params):
    toks = []
    for _ in range(r.randint(0,6)):
        c = r.random()
        if c < 0.35: toks.append(r.choice(names + params))
        elif c < 0.45 and params: toks.append("#" + r.choice(params))
        elif c < 0.55: toks.append("##")
        elif c < 0.7: toks.append(r.choice(["(", ")", ",", "1", "2", "+", "<", ">", "&"]))
        else: toks.append(r.choice(params) if params else "z")
    # avoid ## at ends
    while toks and toks[0] == "##": toks.pop(0)
    while toks and toks[-1] == "##": toks.pop()
    return " ".join(toks)
def prog(r):
    lines = []
    for _ in range(r.randint(1,5)):
        n = r.choice(names[:6])
        if r.random() < 0.5:
            ps = r.sample(["a","b","c"], r.randint(0,3))
            var = r.random() < 0.2
            plist = ", ".join(ps + (["..."] if var else []))
            lines.append("#define %s(%s) %s" % (n, plist, body(r, ps + (["__VA_ARGS__"] if var else []))))
        else:
            lines.append("#define %s %s" % (n, body(r, [])))
    for _ in range(r.randint(1,4)):
        t = []
        for _ in range(r.randint(1,12)):
            t.append(r.choice(names + ["(", ")", ",", "1", "(", ")"]))
        lines.append(" ".join(t))
    return "\n".join(lines) + "\n"
tool, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mode = sys.argv[4] if len(sys.argv) > 4 else "macros"
path = os.path.join(tempfile.mkdtemp(), "t.dts")
r = random.Random(seed)
ops = ["+","-","*","/","%","<<",">>","<",">","<=",">=","==","!=","&","^","|","&&","||"]
def lit():
    v = r.choice([0,1,2,3,7,8,15,31,32,63,64,65,255,0x7fffffff,0x80000000,0xffffffff,0x7fffffffffffffff])
    s = r.choice(["%d","0x%x","0%o"]) % v if v else "0"
    if r.random() < 0.2: s += r.choice(["u","U","l","ul","LL","ull"])
    return s
def expr(d):
    c = r.random()
    if d > 4 or c < 0.3: return r.choice([lit(), lit(), "X", "defined(X)", "defined Y", "'a'", "'\\377'"])
    if c < 0.45: return r.choice(["-","~","!","+"]) + expr(d+1)
    if c < 0.55: return "(" + expr(d+1) + ")"
    if c < 0.62: return expr(d+1) + " ? " + expr(d+1) + " : " + expr(d+1)
    return expr(d+1) + " " + r.choice(ops) + " " + expr(d+1)
if mode == "if":
    bad = 0
    for i in range(n):
        e = expr(0)
        prog = "#define Y\n#if %s\nyes\n#else\nno\n#endif\n" % e
        open(path,"w").write(prog)
        c = subprocess.run(["cpp","-nostdinc","-undef","-x","assembler-with-cpp","-P",path], capture_output=True, text=True)
        o = subprocess.run([tool,path], capture_output=True, text=True)
        cv = "error" if (c.returncode or "error" in c.stderr) else c.stdout.strip()
        ov = "error" if o.returncode else o.stdout.strip()
        if cv != ov:
            bad += 1
            if bad <= 5: print(e, "| cpp:", cv, c.stderr.strip()[:120], "| ours:", ov, o.stderr.strip()[:120])
    print("mismatches", bad, "of", n)
    sys.exit(0)

bad = 0
for i in range(n):
    p = prog(r)
    open(path,"w").write(p)
    c = subprocess.run(["cpp","-nostdinc","-undef","-x","assembler-with-cpp","-P",path], capture_output=True, text=True)
    o = subprocess.run([tool,path], capture_output=True, text=True)
    cerr = c.returncode != 0 or "error" in c.stderr
    oerr = o.returncode != 0
    if cerr and oerr:
        both = globals().get("both",0)+1; globals()["both"]=both; continue
    if cerr != oerr or TOKEN.findall(c.stdout) != TOKEN.findall(o.stdout):
        bad += 1
        if bad <= 3:
            print("=== program\n" + p + "--- cpp (%d) %s\n%s--- ours (%d) %s\n%s" % (c.returncode, c.stderr.strip()[:200], c.stdout, o.returncode, o.stderr.strip()[:200], o.stdout))
print("mismatches", bad, "of", n, "both-error", globals().get("both",0))
