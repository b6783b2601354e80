//! Closing idle connections: a listener whose connections fail their next read once nothing
//! was read or written for `idle` (a client that opens a connection and sends nothing, or
//! sends half a request and stalls, or keeps an unused keep-alive connection, is dropped), so
//! an emulator cannot be exhausted by open sockets.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// How long a connection may stay silent by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A TCP listener whose connections close after `idle` without traffic.
pub struct IdleListener {
    inner: TcpListener,
    idle: Duration,
}

impl IdleListener {
    pub fn new(inner: TcpListener, idle: Duration) -> IdleListener {
        IdleListener { inner, idle }
    }
}

impl axum::serve::Listener for IdleListener {
    type Io = IdleIo<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (io, addr) = axum::serve::Listener::accept(&mut self.inner).await;
        (IdleIo::new(io, self.idle), addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A stream whose reads fail with `TimedOut` once it has been idle for too long.
pub struct IdleIo<S> {
    inner: S,
    idle: Duration,
    timer: Pin<Box<Sleep>>,
}

impl<S> IdleIo<S> {
    pub fn new(inner: S, idle: Duration) -> IdleIo<S> {
        IdleIo {
            inner,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
        }
    }

    fn touch(&mut self) {
        let deadline = Instant::now() + self.idle;
        self.timer.as_mut().reset(deadline);
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for IdleIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    this.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => {
                if this.timer.as_mut().poll(cx).is_ready() {
                    Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "idle connection closed",
                    )))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for IdleIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write(cx, buf);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        result
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    // On tokio's paused clock: time moves only when every task waits, so the timer fires at
    // exactly its deadline, however slow the machine.
    #[tokio::test(start_paused = true)]
    async fn a_silent_stream_times_out_after_its_traffic() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut io = IdleIo::new(server, DEFAULT_IDLE_TIMEOUT);
        client.write_all(b"abc").await.unwrap();
        let mut buf = [0u8; 3];
        io.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"abc");
        // Traffic just before the deadline starts the silence over.
        tokio::time::advance(DEFAULT_IDLE_TIMEOUT - Duration::from_secs(1)).await;
        client.write_all(b"d").await.unwrap();
        let mut one = [0u8; 1];
        io.read_exact(&mut one).await.unwrap();
        let last_traffic = Instant::now();
        let err = io.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(last_traffic.elapsed(), DEFAULT_IDLE_TIMEOUT);
        // The client end is still open: only the server side gave up.
        client.write_all(b"e").await.unwrap();
    }
}
