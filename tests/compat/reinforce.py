"""Policy gradients on CartPole, written the way the PyTorch examples' reinforcement_learning
scripts are: ``reinforce.py`` (a softmax policy, ``Categorical(probs)``, ``m.sample()``,
``m.log_prob(action)``, returns normalised by their std, ``-log_prob * R`` summed, Adam) and
``actor_critic.py`` (a shared body with action and value heads, ``SavedAction`` tuples,
``F.smooth_l1_loss`` for the critic).

The environment is gym's CartPole-v1 dynamics written in numpy (no gym), starting from numpy
draws of a fixed seed. An action is ``m.sample()`` unless the program is given exploration noise:
the comparison with webgrad passes the same numpy uniforms to both runs, and the action is then
the inverse CDF of ``m.probs`` at that uniform (two random generators cannot agree otherwise);
after the compared episodes, a few more draw their actions with ``m.sample()``.

    python tests/compat/reinforce.py --model actor_critic

``main(steps, device, init, ...)`` runs ``steps`` episodes (one optimizer step each) and returns
the per-episode losses and the initial weights (see tests/compat/harness.py).
"""
import argparse
import math
from collections import deque, namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


class CartPole:
    """gym's CartPole-v1 (Euler integration, the same constants), deterministic given its seed."""
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_threshold_radians, x_threshold, reward_threshold = 12 * 2 * math.pi / 360, 2.4, 475.0

    def __init__(self, seed, max_episode_steps=500):
        self.rng = np.random.default_rng(seed)
        self.max_episode_steps = max_episode_steps

    def reset(self):
        self.state, self.steps = self.rng.uniform(-0.05, 0.05, 4), 0
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        total_mass, polemass_length = self.masscart + self.masspole, self.masspole * self.length
        force = self.force_mag if action == 1 else -self.force_mag
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + polemass_length * theta_dot ** 2 * sintheta) / total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta ** 2 / total_mass))
        xacc = temp - polemass_length * thetaacc * costheta / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self.state, self.steps = np.array([x, x_dot, theta, theta_dot]), self.steps + 1
        terminated = bool(abs(x) > self.x_threshold or abs(theta) > self.theta_threshold_radians)
        return self.state.astype(np.float32), 1.0, terminated, self.steps >= self.max_episode_steps, {}


class Policy(nn.Module):
    """reinforce.py's policy."""

    def __init__(self, dropout=0.6):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=dropout)
        self.affine2 = nn.Linear(128, 2)

        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


class ActorCritic(nn.Module):
    """actor_critic.py's policy: one body, an actor head and a critic head."""

    def __init__(self):
        super(ActorCritic, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.action_head = nn.Linear(128, 2)
        self.value_head = nn.Linear(128, 1)

        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


def explore(m, u):
    """The action ``m.sample()`` would be if its uniform draw were ``u``: the inverse CDF of m.probs."""
    return (m.probs.cumsum(-1) <= u).sum(-1).clamp(max=m.probs.size(-1) - 1)


def parse_args(argv):
    parser = argparse.ArgumentParser(description='PyTorch policy gradient example')
    parser.add_argument('--model', default='reinforce', choices=['reinforce', 'actor_critic'])
    parser.add_argument('--gamma', type=float, default=0.99, metavar='G')
    parser.add_argument('--seed', type=int, default=543, metavar='N')
    parser.add_argument('--episodes', type=int, default=30, metavar='N')
    parser.add_argument('--max-episode-steps', type=int, default=40, metavar='N')
    parser.add_argument('--sampled-episodes', type=int, default=2, metavar='N')
    parser.add_argument('--log-interval', type=int, default=5, metavar='N')
    return parser.parse_args(argv)


def main(steps=None, device=None, init=None, model="reinforce", dropout=0.6, argv=None):
    """Train ``steps`` episodes with the given noise, then ``--sampled-episodes`` more with
    ``m.sample()``; returns {"losses", "init", "probe"} (the compared episodes' losses; probe: the
    log-probabilities and entropy at a fixed state after them)."""
    args = parse_args(argv if argv is not None else ['--model', model])
    torch.manual_seed(args.seed)
    device = device or torch.device('cpu')
    env = CartPole(args.seed, args.max_episode_steps)
    noise = np.random.default_rng(args.seed + 1)
    eps = np.finfo(np.float32).eps.item()

    policy = Policy(dropout) if args.model == 'reinforce' else ActorCritic()
    if init is not None:
        policy.load_state_dict(init)
    init = {k: v.detach().clone() for k, v in policy.state_dict().items()}
    policy = policy.to(device)
    optimizer = optim.Adam(policy.parameters(), lr=1e-2 if args.model == 'reinforce' else 3e-2)
    losses = []

    def select_action(state, u=None):
        if args.model == 'reinforce':
            state = torch.from_numpy(state).float().unsqueeze(0).to(device)
            probs = policy(state)
        else:
            state = torch.from_numpy(state).float().to(device)
            probs, state_value = policy(state)
        m = Categorical(probs)
        action = m.sample() if u is None else explore(m, u)
        if args.model == 'reinforce':
            policy.saved_log_probs.append(m.log_prob(action))
        else:
            policy.saved_actions.append(SavedAction(m.log_prob(action), state_value))
        return action.item()

    def finish_reinforce():
        R = 0
        policy_loss = []
        returns = deque()
        for r in policy.rewards[::-1]:
            R = r + args.gamma * R
            returns.appendleft(R)
        returns = torch.tensor(returns, device=device)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum()
        policy_loss.backward()
        optimizer.step()
        del policy.rewards[:]
        del policy.saved_log_probs[:]
        return policy_loss.item()

    def finish_actor_critic():
        R = 0
        saved_actions = policy.saved_actions
        policy_losses = []
        value_losses = []
        returns = []
        for r in policy.rewards[::-1]:
            R = r + args.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns, device=device)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for (log_prob, value), R in zip(saved_actions, returns):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, torch.tensor([R], device=device)))
        optimizer.zero_grad()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        loss.backward()
        optimizer.step()
        del policy.rewards[:]
        del policy.saved_actions[:]
        return loss.item()

    def probe_policy():
        with torch.no_grad():
            state = torch.tensor([[0.01, -0.02, 0.03, 0.04]], device=device)
            probs = policy(state) if args.model == 'reinforce' else policy(state[0])[0]
            m = Categorical(probs)
            return [m.log_prob(torch.tensor(a, device=device)).sum().item() for a in (0, 1)] + \
                [m.entropy().sum().item()]

    finish_episode = finish_reinforce if args.model == 'reinforce' else finish_actor_critic
    episodes = steps if steps is not None else args.episodes
    running_reward = 10
    for i_episode in range(1, episodes + args.sampled_episodes + 1):
        sampled = i_episode > episodes
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 10000):
            action = select_action(state, None if sampled else noise.random())
            assert action in (0, 1), action
            state, reward, done, truncated, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if done or truncated:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        loss = finish_episode()
        if not sampled:
            losses.append(loss)
        if i_episode == episodes:
            probe = probe_policy()
        if i_episode % args.log_interval == 0:
            print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}'.format(
                i_episode, ep_reward, running_reward))
        if running_reward > env.reward_threshold:
            print("Solved! Running reward is now {} and the last episode runs to {} time steps!".format(
                running_reward, t))
            break

    return {"losses": losses, "init": init, "probe": probe}


if __name__ == "__main__":
    import sys
    main(argv=sys.argv[1:])
