#!/usr/bin/python3
"""train.py - trains docs/nnue.md's network on XQFDATA1 files and exports the engine's net file.

Usually run by `xqf-tune nnue train` (tuner/cli/nnue.c), which checks the
arguments first; it can be run directly with the same options.  Exit
status: 0 done, 1 failure (PyTorch missing, the engine check failed), 2 bad
arguments or input that is not training data.

Pipeline: a first pass over the data counts it and keeps the validation
records (a hash of the position chooses them, nnue_data.position_hash);
each epoch then streams the files through a shuffle buffer in bounded
memory, extracts features with numpy a block at a time and takes Adam steps
on docs/nnue.md's loss, the learning rate on a cosine from --lr down to
1 % of it over the whole run (SGDR's annealing, Loshchilov and Hutter 2017,
without restarts), the clamps applied after every step.  After the last
epoch: export, then the quantised net checked against the float one on
held-out positions (numpy's copy of the engine's integer arithmetic, and
with --engine the engine itself).
"""
import argparse
import datetime
import hashlib
import math
import os
import sys
import time

try:
    import numpy as np
except ImportError:
    print("xqf-tune: error: numpy is missing: install Debian's python3-numpy and python3-torch (ops/setup) "
          "and run /usr/bin/python3", file=sys.stderr)
    sys.exit(1)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nnue_data  # noqa: E402
import nnue_net  # noqa: E402
from nnue_data import DataError  # noqa: E402
import nnue_report  # noqa: E402

PROGRAM = "xqf-tune"

# The engine check's tolerance, |engine - trainer's eval| <= ABS + REL * |trainer's eval| on every
# position.  The trainer's eval rounds the weights as the engine does (quantisation-aware training), so
# only the two truncating divisions part them: measured with the numpy integer evaluator, at most
# about 1 cp on 1,000 held-out positions (docs/nnue.md, "Training the network").  Besides, the engine
# must give numpy's integer on every position: the contract's arithmetic is exact.
TOL_ABS_CP = 3.0
TOL_REL = 0.02


def fail(status, msg):
    print(f"{PROGRAM}: error: {msg}", file=sys.stderr)
    sys.exit(status)


def options(argv):
    p = argparse.ArgumentParser(prog="train.py", description=__doc__.split("\n")[0])
    p.add_argument("data", nargs="+", metavar="DATA", help="XQFDATA1 files, or directories of *.data files")
    p.add_argument("--out", required=True, metavar="NET",
                   help="the net file, or a directory for xqf-<sha256 12 hex>.nnue")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=16384)
    p.add_argument("--lambda", dest="lam", type=float, default=0.75,
                   help="weight of the search score against the game result in the target")
    p.add_argument("--scale", type=float, default=400.0, metavar="K")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where PyTorch trains: auto takes a GPU when PyTorch sees one (CUDA), else the CPU")
    p.add_argument("--val-share", type=float, default=0.02)
    p.add_argument("--val-max", type=int, default=200000, help="validation positions evaluated (at most)")
    p.add_argument("--buffer", type=int, default=2000000, help="shuffle buffer in positions (54 bytes each)")
    p.add_argument("--checkpoints", metavar="DIR", help="default: NET.ckpt, or NET/checkpoints for a directory")
    p.add_argument("--resume", metavar="DIR", help="continue from DIR's last checkpoint")
    p.add_argument("--init", metavar="NET",
                   help="start from a net file's weights (a parent net: its knowledge outlives its data) "
                        "instead of random ones")
    p.add_argument("--html", metavar="FILE")
    p.add_argument("--engine", metavar="PATH", help="check PATH evalnet NET against the float net")
    p.add_argument("--check", type=int, default=1000, help="held-out positions of the quantisation checks")
    p.add_argument("--progress", type=float, default=10.0, help="seconds between progress lines")
    a = p.parse_args(argv)
    bad = [(a.epochs < 1, "--epochs: at least 1"), (a.batch < 1, "--batch: at least 1"),
           (not 0 <= a.lam <= 1, "--lambda: in [0, 1]"), (not a.scale > 0, "--scale: above 0"),
           (not a.lr > 0, "--lr: above 0"), (a.threads < 1, "--threads: at least 1"),
           (not 0 <= a.val_share < 1, "--val-share: in [0, 1)"), (a.buffer < 2, "--buffer: at least 2"),
           (a.check < 0, "--check: at least 0"),
           (a.init is not None and a.resume is not None, "--init and --resume: one or the other")]
    for cond, msg in bad:
        if cond:
            fail(2, msg)
    return a


def pick_device(torch, asked):
    """The torch.device to train on: --device cuda needs a GPU PyTorch can use (fails with status 1
    without one, rather than train on the CPU for hours unasked); auto takes one when there is one."""
    has_cuda = torch.cuda.is_available()
    if asked == "cuda" and not has_cuda:
        fail(1, "--device cuda: PyTorch sees no GPU here (torch.cuda.is_available() is false; Debian's "
                "python3-torch is built without CUDA: use a PyTorch with CUDA, or --device cpu)")
    if asked == "cuda" or (asked == "auto" and has_cuda):
        return torch.device("cuda"), f"cuda ({torch.cuda.get_device_name(0)})"
    return torch.device("cpu"), f"cpu ({torch.get_num_threads()} threads)"


def batches(blocks, size):
    """Blocks of records cut into batches of `size` (the last of an epoch may be smaller)."""
    rest = None
    for b in blocks:
        if rest is not None and len(rest):
            b = np.concatenate([rest, b])
        n = len(b) // size * size
        for i in range(0, n, size):
            yield b[i:i + size]
        rest = b[n:]
    if rest is not None and len(rest):
        yield rest


def hms(seconds):
    return str(datetime.timedelta(seconds=int(max(0, seconds))))


def main(argv):
    a = options(argv)
    try:
        paths = nnue_data.expand_paths(a.data)
        counts = [nnue_data.record_count(p) for p in paths]
    except DataError as e:
        fail(2, str(e))
    try:
        import torch
        import nnue_model
    except ImportError as e:
        fail(1, f"PyTorch is missing ({e}): install Debian's python3-torch (ops/setup) and run /usr/bin/python3")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    device, device_name = pick_device(torch, a.device)
    print(f"device: {device_name}", flush=True)

    total = sum(counts)
    if total == 0:
        fail(2, "no positions in the data")
    out_is_dir = os.path.isdir(a.out)
    ckpt_dir = a.checkpoints or (os.path.join(a.out, "checkpoints") if out_is_dir else a.out + ".ckpt")
    os.makedirs(ckpt_dir, exist_ok=True)

    t0 = time.time()
    try:
        val, val_total = nnue_data.validation_set(paths, a.val_share, a.val_max)
    except DataError as e:
        fail(2, str(e))
    train_total = total - val_total
    print(f"data: {len(paths)} file(s), {total:,} positions: {train_total:,} training, {val_total:,} held out "
          f"(validation loss on {len(val):,}); read in {time.time() - t0:.1f} s", flush=True)
    if train_total == 0:
        fail(2, "every position is held out for validation (lower --val-share)")

    # The initial weights are drawn on the CPU (the same seed gives the same net on every device),
    # then moved.
    model = nnue_model.Net(a.seed)
    parent = None
    if a.init:
        try:
            q0 = nnue_net.read_net(a.init)
        except (OSError, nnue_net.NetFileError) as e:
            fail(2, f"--init: {e}")
        model.load_int(q0)
        parent = "%s (sha256 %s)" % (os.path.basename(a.init), hashlib.sha256(open(a.init, "rb").read()).hexdigest()[:12])
        print(f"init: from {parent}", flush=True)
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, foreach=True)
    steps_per_epoch = math.ceil(train_total / a.batch)
    total_steps = a.epochs * steps_per_epoch
    history, step_log, start_epoch, step = [], [], 0, 0
    if a.resume:
        last = os.path.join(a.resume, "last.pt")
        if not os.path.exists(last):
            fail(2, f"--resume: no checkpoint in {a.resume} (last.pt)")
        ck = torch.load(last, map_location=device)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        history, step_log, start_epoch, step = ck["history"], ck["steps"], ck["epoch"], ck["step"]
        if ck["paths"] != paths:
            print("warning: the checkpoint was trained on other data files", file=sys.stderr)
        print(f"resumed from {last}: epoch {start_epoch} done", flush=True)

    val_batches = [nnue_model.Batch(val[i:i + 65536], a.lam, a.scale, device) for i in range(0, len(val), 65536)]

    def val_loss():
        if not val_batches:
            return None
        with torch.no_grad():
            s = sum(float(nnue_model.loss_of(model(b), b.target, a.scale)) * b.n for b in val_batches)
        return s / len(val)

    if not history:
        vl = val_loss()
        history.append((0, None, vl))
        print(f"epoch 0 (the initial net): val loss {'-' if vl is None else f'{vl:.6f}'}", flush=True)
    lr_end = a.lr * 0.01
    for epoch in range(start_epoch, a.epochs):
        rng = np.random.default_rng([a.seed, epoch])
        t_epoch, t_line, seen, loss_sum, line_sum, line_n = time.time(), time.time(), 0, 0.0, 0.0, 0
        blocks = nnue_data.shuffled_training(paths, a.val_share, min(a.buffer, max(2, train_total)), rng)
        for rec in batches(blocks, a.batch):
            lr = lr_end + 0.5 * (a.lr - lr_end) * (1 + math.cos(math.pi * min(step, total_steps) / total_steps))
            for g in opt.param_groups:
                g["lr"] = lr
            b = nnue_model.Batch(rec, a.lam, a.scale, device)
            loss = nnue_model.loss_of(model(b), b.target, a.scale)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            model.clip()
            step += 1
            seen += b.n
            loss_sum += float(loss) * b.n
            line_sum += float(loss) * b.n
            line_n += b.n
            now = time.time()
            if now - t_line >= a.progress:
                rate = seen / (now - t_epoch)
                left = (a.epochs - epoch) * train_total - seen
                print(f"epoch {epoch + 1}/{a.epochs}  {seen:,}/{train_total:,}  {rate:,.0f} pos/s  "
                      f"loss {line_sum / line_n:.6f}  lr {lr:.2e}  ETA {hms(left / rate)}", flush=True)
                step_log.append((epoch + seen / train_total, line_sum / line_n))
                t_line, line_sum, line_n = now, 0.0, 0
        vl = val_loss()
        history.append((epoch + 1, loss_sum / max(seen, 1), vl))
        took = time.time() - t_epoch
        print(f"epoch {epoch + 1}/{a.epochs} done: train loss {loss_sum / max(seen, 1):.6f}, "
              f"val loss {'-' if vl is None else f'{vl:.6f}'}, {seen:,} positions in {hms(took)} "
              f"({seen / took:,.0f} pos/s)", flush=True)
        ck = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch + 1, "step": step,
              "history": history, "steps": step_log, "paths": paths}
        torch.save(ck, os.path.join(ckpt_dir, "epoch-%03d.pt" % (epoch + 1)))
        torch.save(ck, os.path.join(ckpt_dir, "last.pt.tmp"))
        os.replace(os.path.join(ckpt_dir, "last.pt.tmp"), os.path.join(ckpt_dir, "last.pt"))

    # ---- export -------------------------------------------------------------
    net = model.folded()
    q = nnue_net.quantise(net)
    files = ", ".join(f"{os.path.basename(p)} ({c})" for p, c in zip(paths, counts))
    last = history[-1]
    desc = (f"XQF-HM6-256-SCR-OB8 trained by tuner/nnue/train.py on "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
            f"positions {total} (training {train_total}, held out {val_total}, val-share {a.val_share}); "
            f"epochs {a.epochs}, batch {a.batch}, lambda {a.lam}, K {a.scale}, Adam lr {a.lr} cosine to 1%, "
            f"factoriser folded, seed {a.seed}"
            f"{'' if parent is None else f', from the parent net {parent}'}; train loss {'-' if last[1] is None else f'{last[1]:.6f}'}, val loss "
            f"{'-' if last[2] is None else f'{last[2]:.6f}'}; data: {files}")
    path = nnue_net.write_net(q, desc, a.out)
    print(f"net: {path} ({os.path.getsize(path):,} bytes)", flush=True)

    # ---- checks on held-out positions ---------------------------------------
    check = val[:a.check] if len(val) else next(nnue_data.read_blocks(paths[0], a.check))[1]
    back = nnue_net.read_net(path)
    f_eval = nnue_net.eval_float(net, check)
    i_eval = nnue_net.eval_int(back, check).astype(np.float64)
    with torch.no_grad():
        t_eval = model(nnue_model.Batch(check, a.lam, a.scale, device)).double().cpu().numpy() * nnue_net.SCALE
    # The trainer's eval (t_eval) rounds the weights as the engine does (quantisation-aware training):
    # it differs from the integer one by the truncating divisions only; the unrounded float net
    # (f_eval) shows what the rounding itself costs.
    d = np.abs(i_eval - t_eval)
    rel = d / np.maximum(np.abs(t_eval), 1)
    u = np.abs(i_eval - f_eval)
    quant = [("positions", len(check)), ("max |int - trainer| (cp)", f"{d.max():.2f}"),
             ("mean |int - trainer| (cp)", f"{d.mean():.3f}"), ("max |int - trainer| / |trainer|", f"{rel.max():.4f}"),
             ("max |int - unrounded float| (cp)", f"{u.max():.2f}"),
             ("mean |int - unrounded float| (cp)", f"{u.mean():.3f}")]
    print("quantisation: " + "; ".join(f"{k} {v}" for k, v in quant), flush=True)
    status = 0
    if a.engine:
        status = engine_check(a.engine, path, check, t_eval, i_eval)
    if a.html:
        settings = [("data", files), ("positions", f"{total:,} ({train_total:,} training, {val_total:,} held out)"),
                    ("epochs", a.epochs), ("batch", a.batch), ("lambda", a.lam), ("K", a.scale),
                    ("learning rate", f"{a.lr} (cosine to 1 %)"), ("seed", a.seed), ("device", device_name),
                    ("started from", parent or "random weights"),
                    ("shuffle buffer", f"{a.buffer:,}"), ("net", path)]
        nnue_report.write_page(a.html, f"Network {os.path.basename(path)}", settings, history, step_log, quant)
        print(f"page: {a.html}", flush=True)
    return status


def engine_check(engine, net_path, check, f_eval, i_eval):
    """Runs `engine evalnet NET` on the check positions' FENs; 1 when it is beyond the tolerance or not
    the integer evaluation docs/nnue.md defines (numpy's copy gives the same integer on every position)."""
    import subprocess
    fens = "".join(nnue_data.fen_of(r) + "\n" for r in check)
    try:
        run = subprocess.run([engine, "evalnet", net_path], input=fens, capture_output=True, text=True,
                             timeout=600)
    except OSError as e:
        fail(1, f"--engine: cannot run {engine}: {e.strerror}")
    if run.returncode != 0:
        fail(1, f"--engine: {engine} evalnet exited with {run.returncode}: {run.stderr.strip()[-400:]}")
    try:
        e_eval = np.array([int(x) for x in run.stdout.split()], dtype=np.float64)
    except ValueError:
        fail(1, f"--engine: {engine} evalnet printed something other than integers")
    if len(e_eval) != len(check):
        fail(1, f"--engine: {len(check)} FENs in, {len(e_eval)} evaluations out")
    d = np.abs(e_eval - f_eval)
    over = d > TOL_ABS_CP + TOL_REL * np.abs(f_eval)
    unlike = int((e_eval != i_eval).sum())
    print(f"engine: |engine - trainer| max {d.max():.2f} cp, mean {d.mean():.3f} cp over {len(check)} positions; "
          f"{int(over.sum())} beyond {TOL_ABS_CP:g} cp + {100 * TOL_REL:g} %; "
          f"{unlike} differ from the numpy integer evaluation", flush=True)
    if over.any() or unlike:
        i = int(np.argmax(over | (e_eval != i_eval)))
        print(f"engine: first: {nnue_data.fen_of(check[i])}: engine {e_eval[i]:.0f}, integer {i_eval[i]:.0f}, "
              f"float {f_eval[i]:.2f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
