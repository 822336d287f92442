// Sort of short lines (n <= RANK_MAX): an invocation per element writes it at its rank, the number
// of elements ordered before it in its line (smaller keys, or equal keys earlier). Stable and
// O(n^2) a line; its loop runs n <= RANK_MAX times (far below lavapipe's limit of 65,535 trips).
${KEYS}
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    if (e >= ui(U_total)) { return; }
    let n = ui(U_n);
    let line = e / n;
    let k = e % n;
    let v = x[at(line, k)];
    let key = key_of(v);
    var rank = 0u;
    for (var j = 0u; j < n; j++) {                       // n <= RANK_MAX (64) times
        rank += select(0u, 1u, before(key_of(x[at(line, j)]), j, key, k));
    }
    values[at(line, rank)] = v;
    indices[at(line, rank)] = i32(k);
}
