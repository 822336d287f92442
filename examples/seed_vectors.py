"""Seed example 3: vectors, gradient accumulation, and zeroing gradients.

    c = a * b + b   =>   dc/da = b = [5, 6],  dc/db = a + 1 = [4, 5]

Run: python examples/seed_vectors.py (it runs in under a second)
"""
import webgrad as wg

a = wg.tensor([3.0, 4.0], requires_grad=True)
b = wg.tensor([5.0, 6.0], requires_grad=True)
c = a * b + b
c.sum().backward()
print("a.grad:", a.grad.tolist())   # [5.0, 6.0]
print("b.grad:", b.grad.tolist())   # [4.0, 5.0]

# d(sum(x + y))/dx = ones; .grad accumulates across backward calls until zeroed
x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = wg.tensor([4.0, 5.0, 6.0], requires_grad=True)
(x + y).sum().backward()
print("x.grad:", x.grad.tolist())   # [1.0, 1.0, 1.0]
print("y.grad:", y.grad.tolist())   # [1.0, 1.0, 1.0]
(x + y).sum().backward()
print("x.grad after a second backward:", x.grad.tolist())   # [2.0, 2.0, 2.0]
x.grad.zero_()
print("x.grad after zero_():", x.grad.tolist())   # [0.0, 0.0, 0.0]
