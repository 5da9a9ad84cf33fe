//! HTTPS for the sim: a generated CA and server certificate (rcgen), served with rustls on
//! the aws-lc-rs provider through an axum [`Listener`]. Only with the `tls` feature: the
//! in-process world speaks plain HTTP, so `kerf sim` builds without a TLS stack; without the
//! feature [`serve`] refuses with [`NO_TLS`].

/// Why HTTPS is refused in a build without the `tls` feature.
pub const NO_TLS: &str = "this build has no TLS (HTTPS needs the `tls` feature: \
    cargo install --path shared/cli --locked --profile cli --features tls)";

#[cfg(feature = "tls")]
pub use with_tls::*;

/// Serves `app` on `tcp` over HTTPS with a fresh CA until `shutdown` resolves; returns the
/// CA's PEM. Refused: this build has no TLS.
#[cfg(not(feature = "tls"))]
pub fn serve(
    _tcp: tokio::net::TcpListener,
    _app: axum::Router,
    _shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<String, crate::SimError> {
    Err(crate::SimError::Tls(NO_TLS.to_string()))
}

#[cfg(feature = "tls")]
mod with_tls {

    use crate::SimError;
    use axum::serve::Listener;
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    use std::sync::Arc;
    use tokio::net::{TcpListener, TcpStream};
    use tokio_rustls::TlsAcceptor;
    use tokio_rustls::server::TlsStream;

    /// A generated CA and the rustls server config for `localhost` / `127.0.0.1`.
    #[derive(Debug)]
    pub struct TlsMaterial {
        /// PEM of the CA certificate clients should trust.
        pub ca_pem: String,
        /// Server config using the aws-lc-rs provider.
        pub config: Arc<rustls::ServerConfig>,
    }

    fn tls_err(e: impl std::fmt::Display) -> SimError {
        SimError::Tls(e.to_string())
    }

    /// Generates a CA and a server certificate signed by it.
    pub fn generate() -> Result<TlsMaterial, SimError> {
        let ca_key = KeyPair::generate().map_err(tls_err)?;
        let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "kerf-sim-ca");
        let ca_cert = ca.self_signed(&ca_key).map_err(tls_err)?;
        let issuer = Issuer::new(ca, ca_key);
        let key = KeyPair::generate().map_err(tls_err)?;
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
                .map_err(tls_err)?;
        params
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        let cert = params.signed_by(&key, &issuer).map_err(tls_err)?;
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let der_key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(tls_err)?
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone(), ca_cert.der().clone()], der_key)
            .map_err(tls_err)?;
        Ok(TlsMaterial {
            ca_pem: ca_cert.pem(),
            config: Arc::new(config),
        })
    }

    /// A TCP listener that completes the TLS handshake before handing connections to axum.
    pub struct TlsListener {
        /// The bound socket.
        pub tcp: TcpListener,
        /// The acceptor.
        pub acceptor: TlsAcceptor,
    }

    impl Listener for TlsListener {
        type Io = TlsStream<TcpStream>;
        type Addr = std::net::SocketAddr;

        async fn accept(&mut self) -> (Self::Io, Self::Addr) {
            loop {
                let Ok((stream, addr)) = self.tcp.accept().await else {
                    continue;
                };
                if let Ok(tls) = self.acceptor.accept(stream).await {
                    return (tls, addr);
                }
            }
        }

        fn local_addr(&self) -> std::io::Result<Self::Addr> {
            self.tcp.local_addr()
        }
    }

    /// Serves `app` on `tcp` over HTTPS with a fresh CA until `shutdown` resolves; returns the
    /// CA's PEM.
    pub fn serve(
        tcp: TcpListener,
        app: axum::Router,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<String, SimError> {
        let material = generate()?;
        let listener = TlsListener {
            tcp,
            acceptor: material.config.clone().into(),
        };
        tokio::spawn(
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .into_future(),
        );
        Ok(material.ca_pem)
    }
}
