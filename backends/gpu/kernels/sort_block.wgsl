// Bitonic sort inside a workgroup: a block of B = 2 * WG (key, index) pairs in shared memory runs
// the stages k = U_k_lo .. U_k_hi (powers of two), each from step U_j_lo (first stage) or k / 2 down
// to 1. Lines are padded to p = U_p (a power of two) with pairs above every real one; a block holds
// B / p whole lines when p < B, else part of one line. The first pass reads keys from x, the last
// writes the sorted values and indices; passes between go through the scratch keys and idx.
// Loops: at most log2(B) stages of at most log2(B) steps (far below lavapipe's 65,535 trips).
${KEYS}
const B: u32 = 2u * WG;
const PAD: u32 = 0xffffffffu;
var<workgroup> sk: array<u32, B>;
var<workgroup> si: array<u32, B>;

fn load(v: u32, line: u32, r: u32, t: u32) {
    if (ui(U_first) == 0u) {
        sk[t] = keys[v];
        si[t] = idx[v];
    } else if (line < ui(U_lines) && r < ui(U_n)) {
        sk[t] = key_of(x[at(line, r)]);
        si[t] = r;
    } else {
        sk[t] = PAD;
        si[t] = PAD;
    }
}

fn store(v: u32, line: u32, r: u32, t: u32) {
    if (ui(U_last) == 0u) {
        keys[v] = sk[t];
        idx[v] = si[t];
    } else if (line < ui(U_lines) && r < ui(U_n)) {
        values[at(line, r)] = x[at(line, si[t])];
        indices[at(line, r)] = i32(si[t]);
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = flat_group(wid, nwg);
    if (g >= ui(U_blocks)) { return; }
    let p = ui(U_p);
    for (var h = 0u; h < 2u; h++) {
        let t = lid + h * WG;
        let v = g * B + t;
        load(v, v / p, v & (p - 1u), t);
    }
    workgroupBarrier();
    var k = ui(U_k_lo);
    var j = ui(U_j_lo);
    loop {                                               // at most log2(B) times: k doubles up to U_k_hi <= B
        if (k > ui(U_k_hi)) { break; }
        loop {                                           // at most log2(B) times: j halves to 0
            if (j == 0u) { break; }
            let i = 2u * j * (lid / j) + lid % j;    // the pair (i, i + j): lid < WG = B / 2 pairs
            let up = (((g * B + i) & (p - 1u)) & k) == 0u;   // by i's position in its line
            let a = i + j;
            if (before(sk[a], si[a], sk[i], si[i]) == up) {
                let tk = sk[i];
                let ti = si[i];
                sk[i] = sk[a];
                si[i] = si[a];
                sk[a] = tk;
                si[a] = ti;
            }
            workgroupBarrier();
            j = j >> 1u;
        }
        k = k << 1u;
        j = k >> 1u;
    }
    for (var h = 0u; h < 2u; h++) {
        let t = lid + h * WG;
        let v = g * B + t;
        store(v, v / p, v & (p - 1u), t);
    }
}
