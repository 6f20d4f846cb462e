//! Where the sentinel filter's log groups come from: the interposer's log parsed in place, or
//! parsed on the recorder's drain thread and received over a channel.

use std::time::Duration;

use crate::error::{Error, Result, Source};
use crate::record::log::{Group, LogReader};

/// A source of the interposer's log groups.
pub trait GroupSource: Send {
    /// The next group, `None` when the log has ended.
    fn next_group(&mut self) -> Result<Option<Group>>;
}

impl<R: std::io::BufRead + Send> GroupSource for LogReader<R> {
    fn next_group(&mut self) -> Result<Option<Group>> {
        LogReader::next_group(self)
    }
}

/// Groups parsed on another thread (the recorder's log drain).
pub struct ChannelLog {
    rx: crossbeam_channel::Receiver<Result<Group>>,
    source: Source,
}

impl ChannelLog {
    /// Receives from `rx`; `source` names the log in errors.
    pub fn new(rx: crossbeam_channel::Receiver<Result<Group>>, source: Source) -> Self {
        ChannelLog { rx, source }
    }
}

impl GroupSource for ChannelLog {
    fn next_group(&mut self) -> Result<Option<Group>> {
        // The interposer writes a record before its close touch, so once the close is in the
        // trace the record is in the pipe: a long wait means the record was lost.
        match self.rx.recv_timeout(Duration::from_secs(60)) {
            Ok(g) => g.map(Some),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Ok(None),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Err(Error::Corrupt {
                source_name: self.source.clone(),
                message: "no record from the allocation interposer for 60 s although the \
                          trace shows its event (did the program close the log descriptor?)"
                    .into(),
            }),
        }
    }
}
