"""A sequence-to-sequence network with attention, written the way PyTorch's "NLP From Scratch:
Translation with a Sequence to Sequence Network and Attention" tutorial writes it: a GRU encoder
(``batch_first``), Bahdanau attention (``Va(tanh(Wa(query) + Ua(keys)))``, ``softmax``, ``torch.bmm``), a
GRU decoder fed ``torch.cat((embedded, context), dim=2)`` with teacher forcing in training and
``topk(1)`` greedy decoding in evaluation, ``torch.empty(...).fill_(SOS_token)``, dropout, ``NLLLoss``
over ``log_softmax`` and two ``Adam`` optimizers. The "language pair" is synthetic: the target is the
source reversed. After ``torch.manual_seed`` both libraries draw the same weights and dropout masks.

    python tests/compat/seq2seq.py --steps 4

``main(steps, device, init, ...)`` trains ``steps`` batches and returns the losses, the initial weights
and the greedy decodings of the evaluation sentences (see tests/compat/harness.py).
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, TensorDataset

SOS_token, EOS_token = 0, 1
WORDS, MAX_LENGTH, HIDDEN = 12, 6, 16


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size

        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)

        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)

        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=encoder_outputs.device).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []

        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs
            )
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)

            if target_tensor is not None:
                # Teacher forcing: Feed the target as the next input
                decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
            else:
                # Without teacher forcing: use its own predictions as the next input
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # detach from history as input

        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)

        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))

        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)

        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)

        return output, hidden, attn_weights


def pairs(n, seed):
    """``n`` (source, target) id rows: random words then EOS, and the same words reversed then EOS."""
    rng = np.random.default_rng(seed)
    src = np.full((n, MAX_LENGTH), EOS_token, dtype=np.int64)
    tgt = np.full((n, MAX_LENGTH), EOS_token, dtype=np.int64)
    for i in range(n):
        words = rng.integers(2, WORDS, int(rng.integers(2, MAX_LENGTH)))
        src[i, :len(words)] = words
        tgt[i, :len(words)] = words[::-1]
    return torch.from_numpy(src), torch.from_numpy(tgt)


def train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion, device):
    losses = []
    for data in dataloader:
        input_tensor, target_tensor = (t.to(device) for t in data)

        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()

        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)

        loss = criterion(
            decoder_outputs.view(-1, decoder_outputs.size(-1)),
            target_tensor.view(-1)
        )
        loss.backward()

        encoder_optimizer.step()
        decoder_optimizer.step()

        losses.append(loss.item())
    return losses


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=6)
    parser.add_argument('--batch', type=int, default=8)
    parser.add_argument('--lr', type=float, default=0.01)
    return parser.parse_args(argv)


def main(steps=None, device=None, init=None, argv=None):
    """Train ``steps`` batches; returns {"losses", "init", "decoded"}."""
    args = parse_args(argv if argv is not None else [])
    steps = steps or args.steps
    torch.manual_seed(0)
    device = device or "cpu"

    train_dataloader = DataLoader(TensorDataset(*pairs(steps * args.batch, 1)), batch_size=args.batch, shuffle=True)
    encoder = EncoderRNN(WORDS, HIDDEN)
    decoder = AttnDecoderRNN(HIDDEN, WORDS)
    nets = {"encoder": encoder, "decoder": decoder}
    if init is not None:   # (one flat dict: "encoder.embedding.weight", ...)
        for name, net in nets.items():
            net.load_state_dict({k[len(name) + 1:]: v for k, v in init.items() if k.startswith(name + ".")})
    init = {f"{name}.{k}": v.detach().clone() for name, net in nets.items() for k, v in net.state_dict().items()}
    encoder, decoder = encoder.to(device), decoder.to(device)

    encoder_optimizer = optim.Adam(encoder.parameters(), lr=args.lr)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=args.lr)
    criterion = nn.NLLLoss()
    losses = train_epoch(train_dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion, device)
    for i, loss in enumerate(losses):
        print(f"step {i}: loss {loss:.4f}")

    encoder.eval()
    decoder.eval()
    with torch.no_grad():
        input_tensor, _ = pairs(4, 2)
        encoder_outputs, encoder_hidden = encoder(input_tensor.to(device))
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
        assert decoder_attn.shape == (4, MAX_LENGTH, MAX_LENGTH)
    return {"losses": losses, "init": init, "decoded": decoded_ids.tolist()}


if __name__ == "__main__":
    import sys
    main(argv=sys.argv[1:])
