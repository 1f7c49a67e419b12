"""nnue_model - the trainable network of docs/nnue.md in PyTorch.

The first layer is an embedding bag (mode 'sum', one bag per record and
perspective): a sparse input of about 32 active features out of 7,560 is a
sum of 32 rows, which F.embedding_bag computes without a dense input
(measured against index_add_ over the gathered rows in docs/nnue.md,
"Training the network").

Factoriser: besides its 7,560 real features (king bucket x piece x
square), every piece on a square also activates one of 1,260 virtual
features (piece x square, no king bucket), shared by the 6 buckets.  With
little data, most (bucket, piece, square) triples are rare, and the shared
row learns what they have in common from all of them; at export the
virtual row is added into each bucket's real row, so the engine sees only
the 7,560 (the "factorizer" of nnue-pytorch, official-stockfish/nnue-pytorch
model.py, coalesce_ft_weights; also bullet's input factoriser).  Here the
fold is done in every forward pass (6 x 1,260 x 256 additions, little
beside the bags' sums): the bags hold only real features, the gradient of
a virtual row is the sum of its 6 real rows' gradients, and the rounding
of quantisation-aware training (fake_quant) applies to the folded weights,
the ones the engine rounds.
"""
import numpy as np
import torch
import torch.nn.functional as F

from nnue_data import FEATURES, OUTPUT_BUCKETS, VIRTUAL, features
from nnue_net import HIDDEN, QA, QB, SCALE, W1_CLAMP, W2_CLAMP, NetFloat


class Batch:
    """A block of records as tensors: both perspectives' feature bags (stm's bags, then the other's),
    output bucket and target."""

    def __init__(self, rec, lam, k, device=None):
        """The features are extracted on the CPU (numpy), then the tensors moved to device (None: stay)."""
        idx_s, idx_o, off, cnt, ob = features(rec)
        self.n = len(rec)
        self.indices = torch.from_numpy(np.concatenate([idx_s, idx_o]))
        self.offsets = torch.from_numpy(np.concatenate([off, off + len(idx_s)]))
        self.bucket = torch.from_numpy(ob)
        score = rec[:, 46:48].copy().view("<i2").reshape(-1).astype(np.float32)
        result = rec[:, 50].astype(np.float32) * 0.5
        # docs/nnue.md's target: lambda * sigmoid(score / K) + (1 - lambda) * result.
        self.target = torch.from_numpy(lam / (1 + np.exp(-score / k)) + (1 - lam) * result).float()
        if device is not None and device.type != "cpu":
            self.indices, self.offsets, self.bucket, self.target = (
                t.to(device, non_blocking=True) for t in (self.indices, self.offsets, self.bucket, self.target))


def fake_quant(x, q):
    """x rounded to the grid 1/q in the forward pass, the gradient passed straight through (the
    straight-through estimator of Bengio et al. 2013; quantisation-aware training as Pikafish's
    trainer does): the float net then computes exactly the engine's accumulators and products."""
    return x + (torch.round(x * q) / q - x).detach()


class Net(torch.nn.Module):
    def __init__(self, seed=1):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        # About 32 features sum to an accumulator: rows of sd 0.05 give sums of sd ~0.3 about b1 0.25,
        # most in SCReLU's [0, 1]; the virtual rows start at zero (the factoriser adds nothing at first).
        self.w1 = torch.nn.Parameter(torch.randn(FEATURES, HIDDEN, generator=g) * 0.05)
        self.v1 = torch.nn.Parameter(torch.zeros(VIRTUAL, HIDDEN))
        self.b1 = torch.nn.Parameter(torch.full((HIDDEN,), 0.25))
        self.w2 = torch.nn.Parameter((torch.rand(OUTPUT_BUCKETS, 2 * HIDDEN, generator=g) * 2 - 1) * 0.05)
        self.b2 = torch.nn.Parameter(torch.zeros(OUTPUT_BUCKETS))

    @torch.no_grad()
    def load_int(self, q):
        """Starts from a quantised net (a parent net's file, nnue_net.NetInt): its weights divided by
        their scales, the virtual rows zero, so that the net exported untrained is the parent, byte for
        byte (a warm start, as nnue-pytorch's --resume-from-model starts from a .nnue)."""
        self.w1.copy_(torch.from_numpy(q.w1.astype(np.float64) / QA))
        self.v1.zero_()
        self.b1.copy_(torch.from_numpy(q.b1.astype(np.float64) / QA))
        self.w2.copy_(torch.from_numpy(q.w2.astype(np.float64) / QB))
        self.b2.copy_(torch.from_numpy(q.b2.astype(np.float64) / (QA * QB)))

    def fold(self):
        """W1 as the engine gets it: each virtual row added to its 6 real rows."""
        return (self.w1.view(6, VIRTUAL, HIDDEN) + self.v1).view(FEATURES, HIDDEN)

    def forward(self, b):
        """eval_cp / 400 (docs/nnue.md's out) of each record, with the engine's rounded weights."""
        w1 = fake_quant(self.fold(), QA)
        acc = F.embedding_bag(b.indices, w1, b.offsets, mode="sum") + fake_quant(self.b1, QA)
        v = torch.clamp(acc, 0, 1).square()
        v = torch.cat([v[:b.n], v[b.n:]], 1)                 # side to move's 256, then the other's
        # All 8 output neurons as one matrix product, then each record's bucket: cheaper on a CPU than
        # gathering a 512-weight row per record (and scattering its gradient back).
        out = v @ fake_quant(self.w2, QB).t() + self.b2
        return out.gather(1, b.bucket.view(-1, 1)).view(-1)

    @torch.no_grad()
    def clip(self):
        """docs/nnue.md's clamps after each step; W1's on the folded rows (real + virtual) the engine gets.

        The virtual rows are kept in [-6, 6] and each real row in
        [-6 - virtual, 6 - virtual], so every folded weight stays in [-6, 6].
        """
        real = self.w1.view(6, VIRTUAL, HIDDEN)
        self.v1.clamp_(-W1_CLAMP, W1_CLAMP)
        real.copy_(torch.maximum(torch.minimum(real, W1_CLAMP - self.v1), -W1_CLAMP - self.v1))
        self.b1.clamp_(-W1_CLAMP, W1_CLAMP)
        self.w2.clamp_(-W2_CLAMP, W2_CLAMP)

    @torch.no_grad()
    def folded(self):
        """The float net the engine's is rounded from (float64 numpy; nnue_net.quantise rounds it)."""
        return NetFloat(self.b1.detach().double().cpu().numpy(), self.fold().detach().double().cpu().numpy(),
                        self.w2.detach().double().cpu().numpy(), self.b2.detach().double().cpu().numpy())


def loss_of(out, target, k):
    """docs/nnue.md's loss: mean squared error between sigmoid(eval_cp / K) and the target."""
    return torch.mean((torch.sigmoid(out * (SCALE / k)) - target) ** 2)
