// LuFactor, step k (second half): the rank-1 update of the trailing block, lu[i, j] -= lu[i, k] * lu[k, j]
// for i, j > k. One invocation per element of the block, no loop.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    let n = ui(U_n);
    let k = ui(U_k);
    let r = n - k - 1u;
    if (e >= ui(U_count) * r * r) { return; }
    let m = e / (r * r);
    let i = k + 1u + (e % (r * r)) / r;
    let j = k + 1u + e % r;
    let base = m * n * n;
    lu[base + i * n + j] = lu[base + i * n + j] - lu[base + i * n + k] * lu[base + k * n + j];
}
