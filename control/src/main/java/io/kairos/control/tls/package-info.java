/**
 * The cluster's TLS identity: its certificate authority ({@link
 * io.kairos.control.tls.CertificateAuthority}, made with BouncyCastle, which stays in this
 * package), each replica's certificate ({@link io.kairos.control.tls.ClusterTls}), the roles a
 * certificate can carry, and PEM files. The API's HTTPS and the Raft transport's mutual TLS are
 * built from here; nothing here opens a socket.
 */
package io.kairos.control.tls;
