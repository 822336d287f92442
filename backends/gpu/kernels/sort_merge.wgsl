// One step of a bitonic sort across workgroups: stage U_k, partner distance U_j (>= the block size,
// so the pairs lie in different blocks); an invocation per pair of the scratch (key, index) lines,
// each padded to p = U_p. No loop: a long line takes one dispatch per step.
${KEYS}
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = flat_group(wid, nwg) * WG + lid;
    if (t >= ui(U_pairs)) { return; }
    let p = ui(U_p);
    let j = ui(U_j);
    let half = p >> 1u;
    let q = t % half;
    let i = 2u * j * (q / j) + q % j;
    let up = (i & ui(U_k)) == 0u;
    let a = (t / half) * p + i;
    let b = a + j;
    if (before(keys[b], idx[b], keys[a], idx[a]) == up) {
        let tk = keys[a];
        let ti = idx[a];
        keys[a] = keys[b];
        idx[a] = idx[b];
        keys[b] = tk;
        idx[b] = ti;
    }
}
