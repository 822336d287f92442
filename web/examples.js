// The playground's examples: {id, title, code}. `?example=ID` opens one. Each reads tensors back
// with `await t.read()`, which works in every browser (t.tolist() needs JSPI).

export const EXAMPLES = [
  {id: "autograd", title: "Autograd basics", code: `import webgrad as wg

x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = wg.tensor([0.5, -1.0, 2.0], requires_grad=True)
loss = ((x * w).sum() - 1) ** 2        # (x.w - 1)^2
loss.backward()

print("device:", x.device)
print("loss:", await loss.read())      # async readback: works everywhere
print("x.grad:", await x.grad.read())  # 2 (x.w - 1) w
print("w.grad:", await w.grad.read())  # 2 (x.w - 1) x
`},

  {id: "wgsl", title: "A custom WGSL kernel", code: `import webgrad as wg

# a new op: one WGSL expression becomes a GPU kernel (on webgpu here, on wgpu natively)
swish = wg.wgsl_elementwise("Swish", "x / (1.0 + exp(-beta * x))", attrs=("beta",))

# its gradient, written with ops (so it runs on every backend and is differentiable again)
@wg.register_gradient("Swish", inputs_to_save=[0])
def swish_grad(dy, saved, attrs):
    (x,) = saved
    s = (attrs["beta"] * x).sigmoid()
    return (dy * (s + attrs["beta"] * x * s * (1 - s)),)

x = wg.linspace(-3, 3, 7, requires_grad=True)
y = swish(x, beta=1.0)
y.sum().backward()
same = x.detach() * x.detach().sigmoid()          # swish with beta=1, from existing ops
print("swish(x):", [round(v, 4) for v in await y.read()])
print("from ops:", [round(v, 4) for v in await same.read()])
print("d/dx:    ", [round(v, 4) for v in await x.grad.read()])
`},

  {id: "training", title: "Training, with a live plot", code: `import math
import webgrad as wg
from webgrad import nn
from webgrad.web import post

# fit y = sin(2x) with a small MLP; webgrad.web.post sends the losses to the page, which plots them
wg.manual_seed(0)
x = wg.linspace(-math.pi, math.pi, 64).reshape(-1, 1)
y = (2 * x).sin()
model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
opt = wg.optim.Adam(model.parameters(), lr=0.02)

pending = []
for step in range(1, 201):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    pending.append(loss.detach())
    if step % 20 == 0:                      # one readback per 20 steps: fewer GPU round trips
        losses = await wg.stack(pending).read()
        pending = []
        post({"loss": losses})              # a dict of numbers or lists: the playground plots it
        print(f"step {step}: loss {losses[-1]:.4f}")
`},
];
