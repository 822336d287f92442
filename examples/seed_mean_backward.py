"""Seed example 1: gradient of a mean through a small chain.

    out = mean(3 * (x + 2)**2)  at x = ones(2, 2)   =>   d out / dx = 6 * (x + 2) / 4 = 4.5 everywhere

Run: python examples/seed_mean_backward.py (it runs in under a second)
"""
import webgrad as wg

x = wg.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
out.backward()

print("out:", out.item())            # 27.0
print("x.grad:", x.grad.tolist())    # [[4.5, 4.5], [4.5, 4.5]]
