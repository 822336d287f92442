// Eigh on the GPU factors B = A + c I by one-sided Jacobi, c the matrix's largest absolute row sum (so B is
// positive semi-definite, and its singular vectors are A's eigenvectors). Here: b[e] = a[e] (+ c on the
// diagonal), c from `shift` (one per matrix). One invocation per element.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    if (e >= ui(U_total)) { return; }
    let n = ui(U_n);
    let at = e % (n * n);
    out[e] = a[e] + select(0.0, shift[e / (n * n)], at / n == at % n);
}
