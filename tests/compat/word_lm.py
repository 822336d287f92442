"""A word-level language model, written the way the PyTorch examples' word_language_model is:
a ``Dictionary``/``Corpus`` turning text into ids, ``batchify`` into columns, truncated BPTT with
``repackage_hidden`` (``.detach()``) for the recurrent models (``nn.LSTM``, ``nn.GRU``, ``nn.RNN``)
or a causal ``nn.TransformerEncoder`` with sinusoidal positions, ``NLLLoss`` on ``log_softmax``,
gradient clipping with ``clip_grad_norm_`` and plain SGD written by hand as
``p.data.add_(p.grad, alpha=-lr)``, an evaluation pass under ``no_grad``, learning-rate annealing
when validation stops improving, and the best model saved with ``torch.save``.

    python tests/compat/word_lm.py --model GRU

``main(steps, device, init, model=...)`` trains ``steps`` batches and returns the losses and the
initial weights (see tests/compat/harness.py).
"""
import argparse
import math
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = """the quick brown fox jumps over the lazy dog
a lazy dog sleeps in the sun while the fox runs
the sun is warm and the dog is happy
the fox and the dog are friends in the end
"""


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, text):
        self.dictionary = Dictionary()
        lines = text.splitlines()
        self.train = self.tokenize(lines * 3)
        self.valid = self.tokenize(lines[1:] + lines[:1])

    def tokenize(self, lines):
        """Tokenizes lines of text (one ``<eos>`` after each)."""
        for line in lines:
            for word in line.split() + ['<eos>']:
                self.dictionary.add_word(word)
        idss = []
        for line in lines:
            words = line.split() + ['<eos>']
            ids = []
            for word in words:
                ids.append(self.dictionary.word2idx[word])
            idss.append(torch.tensor(ids).type(torch.int64))
        return torch.cat(idss)


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            try:
                nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            except KeyError as e:
                raise ValueError("An invalid option for `--model` was supplied, "
                                 "options are ['LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU']") from e
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    """Sine and cosine positions added to the embeddings (sequence-first: [len, batch, dim])."""

    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Module):
    """Container module with an encoder, a causal transformer encoder, and a decoder."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerModel, self).__init__()
        self.model_type = 'Transformer'
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout, max_len=64)
        encoder_layers = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers, enable_nested_tensor=False)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None
        src = self.encoder(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


class TransformerSubclassModel(nn.Transformer):
    """The example's newer form: an ``nn.Transformer`` subclass using its encoder only (its
    ``decoder`` attribute is replaced by the output Linear)."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerSubclassModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                                       num_encoder_layers=nlayers, dropout=dropout)
        self.model_type = 'Transformer'
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout, max_len=64)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None

        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def generate(model, corpus, device, words=12, temperature=1.0):
    """Sample words from the trained model, as the example's generate.py does."""
    model.eval()
    ntokens = len(corpus.dictionary)
    is_transformer_model = hasattr(model, 'model_type') and model.model_type == 'Transformer'
    if not is_transformer_model:
        hidden = model.init_hidden(1)
    input = torch.randint(ntokens, (1, 1), dtype=torch.long).to(device)
    out = []
    with torch.no_grad():  # no tracking history
        for i in range(words):
            if is_transformer_model:
                output = model(input, False)
                word_weights = output[-1].squeeze().div(temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                word_tensor = torch.Tensor([[word_idx]]).long().to(device)
                input = torch.cat([input, word_tensor], 0)
            else:
                output, hidden = model(input, hidden)
                word_weights = output.squeeze().div(temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                input.fill_(word_idx)
            word = corpus.dictionary.idx2word[word_idx]
            out.append(word + ('\n' if i % 20 == 19 else ' '))
    return ''.join(out)


def batchify(data, bsz, device):
    # Work out how cleanly we can divide the dataset into bsz parts, trim the rest, and lay it
    # out as bsz columns.
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def parse_args(argv):
    parser = argparse.ArgumentParser(description='PyTorch word-level language model')
    parser.add_argument('--model', type=str, default='LSTM',
                        help='type of network (RNN_TANH, RNN_RELU, LSTM, GRU, Transformer)')
    parser.add_argument('--emsize', type=int, default=16)
    parser.add_argument('--nhid', type=int, default=24)
    parser.add_argument('--nlayers', type=int, default=2)
    parser.add_argument('--lr', type=float, default=5.0)
    parser.add_argument('--clip', type=float, default=0.25)
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--batch_size', type=int, default=4, metavar='N')
    parser.add_argument('--bptt', type=int, default=6)
    parser.add_argument('--dropout', type=float, default=0.2)
    parser.add_argument('--tied', action='store_true')
    parser.add_argument('--seed', type=int, default=1111)
    parser.add_argument('--log-interval', type=int, default=2, metavar='N')
    parser.add_argument('--save', type=str, default='')
    parser.add_argument('--nhead', type=int, default=2)
    parser.add_argument('--nn-transformer', action='store_true',
                        help='the Transformer model as an nn.Transformer subclass (else nn.TransformerEncoder)')
    return parser.parse_args(argv)


def main(steps=None, device=None, init=None, out_dir=None, model=None, dropout=None, nn_transformer=False, argv=None):
    """Train (``steps`` batches in all when given); returns {"losses", "init", "val"}."""
    args = parse_args(argv if argv is not None else [])
    if model is not None:
        args.model = model
    if dropout is not None:
        args.dropout = dropout
    args.nn_transformer = args.nn_transformer or nn_transformer
    torch.manual_seed(args.seed)
    device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    args.save = args.save or os.path.join(out_dir or tempfile.mkdtemp(), 'model.pt')

    corpus = Corpus(TEXT)
    eval_batch_size = 2
    train_data = batchify(corpus.train, args.batch_size, device)
    val_data = batchify(corpus.valid, eval_batch_size, device)

    ntokens = len(corpus.dictionary)
    if args.model == 'Transformer':
        model_class = TransformerSubclassModel if args.nn_transformer else TransformerModel
        net = model_class(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout)
    else:
        net = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied)
    if init is not None:
        net.load_state_dict(init)
    init = {k: v.detach().clone() for k, v in net.state_dict().items()}
    net = net.to(device)
    criterion = nn.NLLLoss()

    def evaluate(data_source):
        net.eval()
        total_loss = 0.
        if args.model != 'Transformer':
            hidden = net.init_hidden(eval_batch_size)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, args.bptt):
                data, targets = get_batch(data_source, i, args.bptt)
                if args.model == 'Transformer':
                    output = net(data)
                    output = output.view(-1, ntokens)
                else:
                    output, hidden = net(data, hidden)
                    hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    losses, step_times = [], []

    def train(lr):
        net.train()
        total_loss = 0.
        start_time = time.time()
        if args.model != 'Transformer':
            hidden = net.init_hidden(args.batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
            if steps is not None and len(losses) == steps:
                break
            t0 = time.time()
            data, targets = get_batch(train_data, i, args.bptt)
            # Starting each batch, we detach the hidden state from how it was previously produced.
            # If we didn't, the model would try backpropagating all the way to start of the dataset.
            net.zero_grad()
            if args.model == 'Transformer':
                output = net(data)
                output = output.view(-1, ntokens)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = net(data, hidden)
            loss = criterion(output, targets)
            loss.backward()

            # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
            torch.nn.utils.clip_grad_norm_(net.parameters(), args.clip)
            for p in net.parameters():
                p.data.add_(p.grad, alpha=-lr)

            total_loss += loss.item()
            losses.append(loss.item())
            step_times.append(time.time() - t0)
            if batch % args.log_interval == 0 and batch > 0:
                cur_loss = total_loss / args.log_interval
                elapsed = time.time() - start_time
                print('| {:5d}/{:5d} batches | lr {:02.2f} | ms/batch {:5.2f} | loss {:5.2f} | ppl {:8.2f}'.format(
                    batch, len(train_data) // args.bptt, lr, elapsed * 1000 / args.log_interval, cur_loss,
                    math.exp(cur_loss)))
                total_loss = 0
                start_time = time.time()

    lr = args.lr
    best_val_loss = None
    val_losses = []
    epoch = 0
    while epoch < args.epochs or (steps is not None and len(losses) < steps):
        epoch += 1
        train(lr)
        val_loss = evaluate(val_data)
        val_losses.append(val_loss)
        print('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(
            epoch, val_loss, math.exp(val_loss)))
        if not best_val_loss or val_loss < best_val_loss:
            with open(args.save, 'wb') as f:
                torch.save(net.state_dict(), f)
            best_val_loss = val_loss
        else:
            lr /= 4.0   # anneal the learning rate if no improvement has been seen on validation
    # Load the best saved model.
    with open(args.save, 'rb') as f:
        net.load_state_dict(torch.load(f))
        # after load the rnn params are not a continuous chunk of memory
        # this makes them a continuous chunk, and will speed up forward pass
        if args.model in ['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU']:
            net.rnn.flatten_parameters()
    test_loss = evaluate(val_data)
    print('=' * 89)
    print('| End of training | test loss {:5.2f} | test ppl {:8.2f}'.format(test_loss, math.exp(test_loss)))
    print('=' * 89)
    text = generate(net, corpus, device)
    assert all(word in corpus.dictionary.word2idx for word in text.split())
    print(text)
    return {"losses": losses, "step_times": step_times, "init": init, "val": val_losses + [test_loss]}


if __name__ == '__main__':
    import sys
    main(argv=sys.argv[1:])
