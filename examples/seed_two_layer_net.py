"""Seed example 4: a two-layer network trained by hand.

    h = x @ w1 + b1,   y_pred = h @ w2 + b2,   loss = mean((y_pred - y)**2)

and plain SGD written out: ``w -= lr * w.grad`` under ``no_grad``, then ``w.grad.zero_()``.

Run: python examples/seed_two_layer_net.py (it runs in under a second)
"""
import webgrad as wg

wg.manual_seed(0)
n, d_in, d_hidden, d_out = 64, 10, 32, 1
lr, steps = 0.01, 100

x = wg.randn(n, d_in)
true_w = wg.randn(d_in, d_out)
y = x @ true_w + 0.5                  # a target the network can fit

w1 = (wg.randn(d_in, d_hidden) * 0.1).requires_grad_()
b1 = wg.zeros(d_hidden, requires_grad=True)
w2 = (wg.randn(d_hidden, d_out) * 0.1).requires_grad_()
b2 = wg.zeros(d_out, requires_grad=True)
params = [w1, b1, w2, b2]

for step in range(steps):
    h = x @ w1 + b1
    y_pred = h @ w2 + b2
    loss = ((y_pred - y) ** 2).mean()
    loss.backward()
    with wg.no_grad():
        for w in params:
            w -= lr * w.grad
            w.grad.zero_()
    if step == 0:
        print("first loss:", loss.item())
    if step % 20 == 0:
        print(f"step {step:3d}  loss {loss.item():.4g}")
print("last loss:", loss.item())
