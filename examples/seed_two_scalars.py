"""Seed example 2: two scalars.

    z = (x + y) * (x - y) = x**2 - y**2   =>   dz/dx = 2x = 4,  dz/dy = -2y = -6   at x=2, y=3

Run: python examples/seed_two_scalars.py (it runs in under a second)
"""
import webgrad as wg

x = wg.tensor(2.0, requires_grad=True)
y = wg.tensor(3.0, requires_grad=True)
z = (x + y) * (x - y)
z.backward()

print("z:", z.item())             # -5.0
print("x.grad:", x.grad.item())   # 4.0
print("y.grad:", y.grad.item())   # -6.0
