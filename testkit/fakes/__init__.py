"""Local HTTP fakes of the network services we don't own, each on 127.0.0.1 at a free port."""
