"""Sample KB, role ``patient_dental``: plain-language answers for dental patients (written for this project)."""

from __future__ import annotations

# (ĐỀ MỤC, CÂU HỎI, CÂU TRẢ LỜI, keywords) — the builder adds no-diacritic forms of the keywords.
ENTRIES: list[tuple[str, str, str, str]] = [
    # --- Răng nhạy cảm / ê buốt
    ("Răng nhạy cảm", "Răng bị ê buốt khi uống nước lạnh là bị gì?",
     "Ê buốt khi uống nước lạnh thường do men răng bị mòn hoặc nướu tụt làm lộ phần ngà răng bên dưới. "
     "Bạn nên chải răng nhẹ nhàng bằng bàn chải lông mềm và dùng kem đánh răng dành cho răng nhạy cảm trong vài tuần. "
     "Hạn chế đồ uống quá chua hoặc quá lạnh. Nếu ê buốt kéo dài hơn hai tuần, đau tự nhiên hoặc đau về đêm, "
     "hãy đi khám nha sĩ vì đó có thể là dấu hiệu sâu răng hoặc viêm tủy.",
     "ê buốt; ê răng; buốt răng; răng nhạy cảm; uống lạnh bị buốt; ê khi uống nước đá"),
    ("Răng nhạy cảm", "Kem đánh răng cho răng nhạy cảm có tác dụng không?",
     "Kem đánh răng cho răng nhạy cảm giúp giảm ê buốt ở nhiều người nhưng cần dùng đều đặn hai lần mỗi ngày, "
     "thường sau 2–4 tuần mới thấy rõ hiệu quả. Sau khi chải, bạn chỉ nên nhổ bọt, không súc miệng quá kỹ để thuốc lưu lại lâu hơn. "
     "Nếu dùng đủ một tháng mà vẫn ê buốt, nên đi khám để tìm nguyên nhân.",
     "kem chống ê buốt; kem đánh răng nhạy cảm; giảm ê buốt"),
    ("Răng nhạy cảm", "Vì sao răng bị ê buốt sau khi tẩy trắng?",
     "Ê buốt sau tẩy trắng là hiện tượng thường gặp và thường hết sau vài ngày. "
     "Trong thời gian này bạn nên tránh đồ quá nóng, quá lạnh và dùng kem đánh răng cho răng nhạy cảm. "
     "Nếu ê buốt kéo dài quá một tuần hoặc rất dữ dội, hãy báo lại nha sĩ đã thực hiện tẩy trắng.",
     "tẩy trắng bị ê; buốt sau tẩy trắng"),
    # --- Sâu răng
    ("Sâu răng", "Làm sao biết mình bị sâu răng?",
     "Sâu răng giai đoạn đầu thường không đau, chỉ thấy vết trắng đục hoặc nâu đen trên răng. "
     "Khi sâu lớn hơn, bạn có thể thấy lỗ trên răng, nhét thức ăn, ê buốt khi ăn ngọt hoặc lạnh. "
     "Cách chắc chắn nhất là khám nha sĩ định kỳ 6 tháng một lần để phát hiện và trám sớm.",
     "sâu răng; lỗ sâu; răng bị đen; răng có lỗ; dấu hiệu sâu răng"),
    ("Sâu răng", "Răng sâu có tự lành được không?",
     "Lỗ sâu đã hình thành thì không tự lành được, mà sẽ lớn dần theo thời gian. "
     "Chỉ những tổn thương rất sớm (vết trắng đục chưa thành lỗ) mới có thể ngừng tiến triển nhờ fluor và vệ sinh tốt. "
     "Bạn nên đi khám để nha sĩ làm sạch và trám răng trước khi sâu lan vào tủy.",
     "sâu răng tự khỏi; răng sâu có hết không"),
    ("Sâu răng", "Trám răng có đau không?",
     "Trám răng thường không đau; với lỗ sâu lớn, nha sĩ sẽ gây tê tại chỗ để bạn thấy thoải mái. "
     "Sau trám có thể hơi ê vài ngày, sau đó hết. Nếu cắn thấy cộm hoặc đau kéo dài, hãy quay lại để nha sĩ chỉnh.",
     "trám răng; hàn răng; trám răng có đau không; hàn răng có đau"),
    ("Sâu răng", "Đau nhức răng dữ dội về đêm là bị gì?",
     "Đau nhức dữ dội, đau tự nhiên hoặc đau nhiều về đêm thường là dấu hiệu viêm tủy răng do sâu răng lâu ngày. "
     "Bạn nên đi khám nha sĩ sớm, vì viêm tủy không tự khỏi và thường cần điều trị tủy. "
     "Trong lúc chờ khám có thể dùng thuốc giảm đau thông thường theo hướng dẫn trên bao bì; "
     "không đặt thuốc giảm đau hay tỏi vào lỗ sâu vì dễ gây bỏng nướu.",
     "đau răng về đêm; nhức răng; đau răng dữ dội; viêm tủy; đau răng không ngủ được"),
    ("Sâu răng", "Điều trị tủy (lấy tủy) là gì, có cần thiết không?",
     "Điều trị tủy là làm sạch phần tủy răng bị viêm hoặc chết bên trong ống tủy rồi trám kín lại, giúp giữ lại chiếc răng thay vì phải nhổ. "
     "Thủ thuật được làm dưới gây tê nên thường không đau hơn trám răng. "
     "Sau điều trị tủy, răng hàm thường nên được bọc mão để tránh bị vỡ khi ăn nhai.",
     "chữa tủy; lấy tủy; điều trị tủy; răng chết tủy; bọc răng sau lấy tủy"),
    # --- Viêm nướu
    ("Viêm nướu", "Nướu (lợi) bị sưng đỏ, chảy máu khi đánh răng phải làm sao?",
     "Nướu sưng đỏ và chảy máu khi chải răng thường là viêm nướu do mảng bám và cao răng. "
     "Bạn vẫn nên chải răng đều, nhẹ nhàng hai lần mỗi ngày, dùng chỉ nha khoa và đi lấy cao răng. "
     "Viêm nướu thường cải thiện sau 1–2 tuần vệ sinh tốt. "
     "Nếu nướu sưng to, đau nhiều hoặc có mủ, hãy đi khám nha sĩ sớm. "
     "Nếu chảy máu nướu kèm sốt, bầm tím hoặc chấm đỏ dưới da, chảy máu mũi hay máu khó cầm, hãy đến cơ sở y tế ngay, "
     "vì đó có thể là dấu hiệu sốt xuất huyết hoặc bệnh về máu, không phải bệnh của nướu.",
     "chảy máu chân răng; sưng lợi; sưng nướu; viêm lợi; lợi chảy máu; nướu đỏ"),
    ("Viêm nướu", "Lấy cao răng có hại men răng không?",
     "Lấy cao răng đúng cách không làm mòn hay hại men răng. "
     "Sau khi lấy cao, răng có thể hơi ê vài ngày và nướu hơi rỉ máu, đó là bình thường. "
     "Nên lấy cao răng định kỳ khoảng 6 tháng một lần hoặc theo lời khuyên của nha sĩ.",
     "cạo vôi răng; lấy vôi răng; cao răng; lấy cao răng có hại không"),
    ("Viêm nướu", "Viêm nha chu là gì, có nguy hiểm không?",
     "Viêm nha chu là tình trạng viêm lan sâu xuống mô và xương giữ răng, thường tiến triển từ viêm nướu không được điều trị. "
     "Dấu hiệu gồm hôi miệng, nướu tụt, răng lung lay hoặc thưa dần. "
     "Bệnh có thể làm mất răng nếu không điều trị, và liên quan đến đái tháo đường. "
     "Bạn cần được nha sĩ khám, làm sạch sâu dưới nướu và tái khám đều đặn.",
     "nha chu; viêm nha chu; răng lung lay; tụt lợi; tụt nướu; mất răng do nha chu"),
    ("Viêm nướu", "Bị áp xe nướu, sưng mủ ở chân răng thì làm sao?",
     "Khối sưng có mủ ở nướu hoặc chân răng là nhiễm trùng cần nha sĩ khám và dẫn lưu, không nên tự chích nặn. "
     "Trong lúc chờ, có thể súc miệng nước muối ấm và dùng thuốc giảm đau thông thường. "
     "Hãy đi cấp cứu ngay nếu sưng lan ra má, cổ, dưới hàm, khó há miệng, khó nuốt hoặc khó thở.",
     "áp xe răng; sưng mủ nướu; mụn mủ ở lợi; nhiễm trùng răng; sưng má"),
    # --- Răng khôn
    ("Răng khôn", "Răng khôn mọc lệch có cần nhổ không?",
     "Không phải răng khôn mọc lệch nào cũng phải nhổ. "
     "Nha sĩ thường khuyên nhổ khi răng khôn gây sưng đau tái đi tái lại, làm sâu hoặc hỏng răng bên cạnh, gây nang hoặc không có chỗ để mọc và khó vệ sinh. "
     "Nếu răng khôn không gây triệu chứng, bạn có thể theo dõi bằng khám và chụp phim định kỳ. "
     "Hãy đi khám để nha sĩ xem phim X-quang và tư vấn cụ thể.",
     "răng khôn; răng số 8; răng khôn mọc lệch; mọc ngầm; có nên nhổ răng khôn"),
    ("Răng khôn", "Răng khôn bị sưng đau phải làm sao?",
     "Sưng đau quanh răng khôn thường do viêm lợi trùm (nướu phủ trên răng khôn bị viêm). "
     "Bạn nên súc miệng nước muối ấm sau ăn, chải răng nhẹ nhàng vùng đó và có thể dùng thuốc giảm đau thông thường theo hướng dẫn. "
     "Hãy đi khám nha sĩ sớm để được làm sạch và quyết định có cần nhổ răng khôn không. "
     "Hãy đến cơ sở cấp cứu ngay nếu sốt, khó há miệng, khó nuốt, sưng lan ra má, dưới hàm hoặc cổ; "
     "nếu khó thở, gọi 115 ngay.",
     "sưng răng khôn; đau răng khôn; viêm lợi trùm; răng số 8 sưng; sưng má do răng khôn"),
    ("Răng khôn", "Nhổ răng khôn có đau không, bao lâu thì lành?",
     "Khi nhổ, bạn được gây tê nên hầu như không thấy đau, chỉ thấy ấn đẩy. "
     "Sau nhổ thường sưng đau nhiều nhất trong 2–3 ngày đầu rồi giảm dần; vết nhổ lành phần mô mềm sau khoảng 1–2 tuần. "
     "Làm đúng hướng dẫn chăm sóc sau nhổ giúp hồi phục nhanh và ít biến chứng.",
     "nhổ răng khôn có đau không; nhổ răng số 8; sau nhổ răng khôn bao lâu lành"),
    ("Răng khôn", "Đang mang thai có nhổ răng khôn được không?",
     "Trong thai kỳ, nha sĩ thường chỉ làm những điều trị cần thiết để giảm đau và chống nhiễm trùng; "
     "việc nhổ răng khôn không khẩn cấp thường được hoãn đến sau sinh. "
     "Nếu cần can thiệp, giai đoạn an toàn hơn là 3 tháng giữa thai kỳ. "
     "Hãy báo cho nha sĩ biết bạn đang mang thai để được chọn thuốc và phim chụp phù hợp.",
     "mang thai nhổ răng; bà bầu nhổ răng khôn; có thai đau răng"),
    # --- Nhổ răng & chăm sóc sau nhổ
    ("Nhổ răng & chăm sóc sau nhổ", "Sau khi nhổ răng cần kiêng gì?",
     "Cắn chặt gạc 30–60 phút sau nhổ. Trong 24 giờ đầu không súc miệng mạnh, không khạc nhổ, không dùng ống hút. "
     "Không hút thuốc ít nhất 48–72 giờ (càng lâu càng tốt) vì thuốc lá làm vết nhổ chậm lành và dễ viêm ổ răng khô. "
     "Ăn đồ mềm, nguội, nhai bên đối diện; có thể chườm lạnh ngoài má để giảm sưng. "
     "Nếu đau, dùng paracetamol hoặc thuốc nha sĩ kê; không tự dùng aspirin vì aspirin làm máu khó cầm. "
     "Từ ngày thứ hai, súc miệng nhẹ bằng nước muối ấm sau ăn và vẫn chải răng các vùng khác bình thường.",
     "kiêng sau nhổ răng; chăm sóc sau nhổ răng; nhổ răng xong ăn gì; sau nhổ răng"),
    ("Nhổ răng & chăm sóc sau nhổ", "Nhổ răng xong bị chảy máu mãi không cầm thì sao?",
     "Rỉ máu nhẹ (nước bọt có lẫn chút máu) trong ngày đầu là bình thường. "
     "Nếu máu chảy nhiều, hãy cắn chặt một miếng gạc sạch (hoặc túi trà đã làm ẩm) lên vết nhổ liên tục 30 phút, ngồi nghỉ kê cao đầu, không súc miệng, không khạc nhổ. "
     "Nếu vẫn chảy sau khi đã cắn gạc, hãy liên hệ nha sĩ hoặc đến cơ sở y tế ngay. "
     "Nếu máu chảy nhiều không ngừng, hoặc bạn thấy chóng mặt, choáng váng, vã mồ hôi, hãy gọi 115. "
     "Nếu bạn đang dùng thuốc chống đông hay thuốc chống kết tập tiểu cầu, không tự ngừng thuốc; hãy báo ngay cho nha sĩ và bác sĩ kê đơn.",
     "chảy máu sau nhổ răng; máu không cầm; nhổ răng chảy máu"),
    ("Nhổ răng & chăm sóc sau nhổ", "Sau nhổ răng vài ngày lại đau nhức hơn, hôi miệng là bị gì?",
     "Đau tăng lên vào ngày thứ 2–4 sau nhổ, lan lên tai, kèm hôi miệng và thấy hố nhổ trống có thể là viêm ổ răng khô. "
     "Tình trạng này không nguy hiểm nhưng rất đau; bạn nên quay lại nha sĩ để được làm sạch và đặt thuốc vào ổ răng. "
     "Đừng tự chọc hay súc miệng mạnh vào vết nhổ.",
     "viêm ổ răng khô; đau sau nhổ răng; hôi miệng sau nhổ răng; ổ răng khô"),
    ("Nhổ răng & chăm sóc sau nhổ", "Đang uống thuốc chống đông có nhổ răng được không?",
     "Nhiều người dùng thuốc chống đông vẫn nhổ răng được an toàn, nhưng không được tự ý ngừng thuốc. "
     "Hãy báo cho nha sĩ tên thuốc và liều đang dùng; nha sĩ có thể phối hợp với bác sĩ tim mạch và dùng biện pháp cầm máu tại chỗ. "
     "Người uống warfarin thường cần xét nghiệm INR gần ngày nhổ.",
     "thuốc chống đông nhổ răng; aspirin nhổ răng; thuốc loãng máu; warfarin"),
    # --- Trẻ em
    ("Trẻ em", "Trẻ mấy tuổi thì bắt đầu chải răng?",
     "Nên làm sạch răng cho trẻ ngay từ khi mọc chiếc răng đầu tiên. "
     "Dưới 3 tuổi dùng lượng kem đánh răng có fluor bằng hạt gạo; từ 3 đến 6 tuổi dùng lượng bằng hạt đậu Hà Lan (khoảng 0,25 g) và dạy trẻ nhổ bỏ, không nuốt. "
     "Cha mẹ nên chải hoặc kiểm tra lại cho trẻ đến khoảng 7–8 tuổi.",
     "trẻ em chải răng; em bé đánh răng; kem đánh răng trẻ em; răng sữa"),
    ("Trẻ em", "Răng sữa bị sâu có cần chữa không, dù sau này cũng thay?",
     "Có, răng sữa bị sâu vẫn cần được điều trị. "
     "Sâu răng sữa có thể gây đau, nhiễm trùng, ảnh hưởng ăn uống và răng vĩnh viễn mọc bên dưới, và mất răng sữa sớm làm răng mọc lệch sau này. "
     "Hãy cho trẻ khám nha sĩ định kỳ 6 tháng một lần.",
     "sâu răng sữa; trẻ bị sâu răng; răng sữa có cần trám"),
    ("Trẻ em", "Trẻ bú bình đêm có bị sâu răng không?",
     "Cho trẻ ngủ với bình sữa hoặc nước ngọt dễ gây sâu răng sữa hàng loạt, nhất là các răng cửa trên. "
     "Nên tập cho trẻ không ngủ với bình, lau hoặc chải răng sau cữ bú cuối, và chỉ cho uống nước lọc ban đêm.",
     "bú bình đêm; sâu răng bú bình; trẻ ngậm sữa ngủ"),
    ("Trẻ em", "Trám bít hố rãnh cho trẻ là gì?",
     "Trám bít hố rãnh là phủ một lớp vật liệu mỏng lên các rãnh ở mặt nhai răng hàm để thức ăn và vi khuẩn không đọng lại. "
     "Thủ thuật nhanh, không đau, không cần khoan, thường làm cho răng hàm vĩnh viễn mới mọc của trẻ. "
     "Cách này giúp giảm đáng kể nguy cơ sâu răng hàm.",
     "trám bít hố rãnh; phòng sâu răng trẻ em; sealant"),
    ("Trẻ em", "Trẻ bị ngã gãy hoặc rơi mất răng thì phải làm sao?",
     "Rơi răng vĩnh viễn là cấp cứu tính bằng phút; răng của trẻ từ khoảng 6 tuổi trở lên hãy coi là răng vĩnh viễn. "
     "Tìm răng ngay, cầm ở phần thân răng (phần trắng), không chạm vào chân răng. "
     "Nếu răng bẩn, rửa nhanh bằng sữa hoặc nước muối sinh lý (không có thì nước sạch), tối đa 10 giây, không chà, không cạo chân răng. "
     "Tốt nhất là cắm lại răng vào đúng chỗ ngay (mặt trước quay ra ngoài) rồi cho trẻ cắn nhẹ vào gạc hoặc khăn sạch để giữ. "
     "Nếu không cắm lại được, cho răng vào ngay sữa tươi, nước muối sinh lý hoặc một cốc nhỏ nước bọt của trẻ; "
     "không để răng khô, không gói vào giấy, không ngâm trong nước lã. "
     "Đưa trẻ đến nha sĩ hoặc cơ sở cấp cứu ngay lập tức, mang theo cả các mảnh răng vỡ. "
     "Răng sữa bị rơi thì không cắm lại, nhưng vẫn cho trẻ đi khám sớm. "
     "Nếu trẻ bị va đập đầu, nôn, lơ mơ hoặc ngất, gọi 115.",
     "trẻ ngã gãy răng; rơi răng; bật răng; chấn thương răng trẻ em; răng bị bật ra; gãy răng cửa"),
    # --- Niềng răng
    ("Niềng răng", "Bao nhiêu tuổi thì niềng răng được?",
     "Trẻ nên được khám chỉnh nha lần đầu khoảng 7 tuổi để phát hiện sớm các vấn đề về xương hàm. "
     "Niềng răng phổ biến nhất ở tuổi 11–16, nhưng người lớn vẫn niềng được nếu răng và nướu khỏe. "
     "Bác sĩ chỉnh nha sẽ khám, chụp phim để tư vấn thời điểm phù hợp.",
     "niềng răng; chỉnh nha; tuổi niềng răng; người lớn niềng răng"),
    ("Niềng răng", "Niềng răng có đau không, mất bao lâu?",
     "Vài ngày đầu sau khi gắn mắc cài hoặc siết dây, răng thường ê và hơi đau khi nhai, sau đó giảm dần. "
     "Thời gian niềng thường từ 1,5 đến 3 năm tùy tình trạng. "
     "Sau khi tháo niềng cần đeo hàm duy trì đúng chỉ dẫn để răng không chạy lại.",
     "niềng răng có đau; niềng bao lâu; mắc cài; hàm duy trì"),
    ("Niềng răng", "Đang niềng răng vệ sinh thế nào cho đúng?",
     "Khi đeo mắc cài, thức ăn dễ mắc lại nên cần chải kỹ sau mỗi bữa ăn với bàn chải chỉnh nha và bàn chải kẽ. "
     "Dùng chỉ nha khoa có đầu xỏ hoặc tăm nước để làm sạch kẽ răng. "
     "Hạn chế đồ cứng, dẻo và ngọt; tái khám đúng hẹn để bác sĩ kiểm tra.",
     "vệ sinh khi niềng răng; chải răng niềng; bàn chải kẽ"),
    # --- Vệ sinh răng miệng
    ("Vệ sinh răng miệng", "Chải răng thế nào cho đúng?",
     "Chải răng ít nhất hai lần mỗi ngày, mỗi lần khoảng 2 phút, với bàn chải lông mềm và kem có fluor. "
     "Đặt bàn chải nghiêng khoảng 45 độ về phía nướu, chải nhẹ theo chuyển động nhỏ, làm sạch đủ mặt ngoài, mặt trong và mặt nhai. "
     "Thay bàn chải khoảng 3 tháng một lần hoặc khi lông đã xơ.",
     "cách chải răng; đánh răng đúng cách; chải răng mấy lần"),
    ("Vệ sinh răng miệng", "Có nên dùng chỉ nha khoa hằng ngày không?",
     "Có. Bàn chải không làm sạch được kẽ giữa các răng, nơi rất dễ sâu và viêm nướu. "
     "Dùng chỉ nha khoa hoặc bàn chải kẽ mỗi ngày một lần, đưa chỉ nhẹ nhàng, không giật mạnh vào nướu. "
     "Vài ngày đầu nướu có thể rỉ máu nhẹ, thường hết khi nướu khỏe lên.",
     "chỉ nha khoa; xỉa răng; tăm chỉ; làm sạch kẽ răng; dùng tăm có hại không"),
    ("Vệ sinh răng miệng", "Nước súc miệng có thay được đánh răng không?",
     "Không. Nước súc miệng chỉ là phần hỗ trợ, không lấy đi được mảng bám bám chặt trên răng như bàn chải và chỉ nha khoa. "
     "Một số loại nước súc miệng kháng khuẩn chỉ nên dùng ngắn ngày theo chỉ định vì có thể làm ố răng.",
     "nước súc miệng; súc miệng thay đánh răng"),
    ("Vệ sinh răng miệng", "Bao lâu nên đi khám răng một lần?",
     "Đa số người nên khám răng và lấy cao răng khoảng 6 tháng một lần. "
     "Người có bệnh nướu, đái tháo đường, đang niềng răng hoặc hay sâu răng có thể cần khám thường xuyên hơn theo lời nha sĩ. "
     "Khám định kỳ giúp phát hiện sâu răng và bệnh nướu từ sớm khi điều trị còn đơn giản.",
     "khám răng định kỳ; bao lâu khám răng; kiểm tra răng"),
    # --- Hôi miệng
    ("Hôi miệng", "Bị hôi miệng kéo dài là do đâu?",
     "Hôi miệng thường do mảng bám trên lưỡi, cao răng, sâu răng hoặc viêm nướu. "
     "Bạn nên chải răng kỹ, làm sạch lưỡi, dùng chỉ nha khoa và đi khám nha sĩ để lấy cao răng, điều trị răng sâu. "
     "Nếu răng miệng đã sạch mà vẫn hôi, nên khám thêm tai mũi họng hoặc tiêu hóa.",
     "hôi miệng; miệng có mùi; hơi thở hôi; mùi hôi miệng"),
    ("Hôi miệng", "Bị khô miệng thường xuyên có ảnh hưởng đến răng không?",
     "Nước bọt giúp rửa trôi thức ăn và bảo vệ răng, nên khô miệng làm tăng nguy cơ sâu răng và hôi miệng. "
     "Khô miệng có thể do một số thuốc, đái tháo đường, uống ít nước hoặc thở bằng miệng. "
     "Bạn nên uống nước thường xuyên, nhai kẹo cao su không đường và báo với bác sĩ nếu khô miệng kéo dài.",
     "khô miệng; ít nước bọt; miệng khô"),
    # --- Tẩy trắng & thẩm mỹ
    ("Tẩy trắng & thẩm mỹ", "Tẩy trắng răng có hại không?",
     "Tẩy trắng do nha sĩ thực hiện hoặc hướng dẫn là khá an toàn với men răng; tác dụng phụ thường gặp là ê buốt tạm thời. "
     "Nên khám và điều trị sâu răng, viêm nướu trước khi tẩy trắng. "
     "Không nên tự dùng các sản phẩm tẩy trắng không rõ nguồn gốc vì có thể gây bỏng nướu và mòn răng. "
     "Miếng trám và răng sứ không đổi màu khi tẩy trắng.",
     "tẩy trắng răng; làm trắng răng; tẩy trắng có hại không; răng ố vàng"),
    ("Tẩy trắng & thẩm mỹ", "Bọc răng sứ có cần mài răng không?",
     "Bọc mão sứ cần mài bớt một lớp răng để mão có chỗ ngồi vừa khít; lượng mài tùy loại sứ và tình trạng răng. "
     "Răng mài nhiều, nhất là răng còn tủy sống, có thể bị ê buốt hoặc viêm tủy về sau. "
     "Vì vậy chỉ nên bọc sứ khi có chỉ định rõ ràng, và hãy hỏi nha sĩ về các cách ít xâm lấn hơn.",
     "bọc răng sứ; mài răng; răng sứ; mão sứ"),
    # --- Mất răng & phục hình
    ("Mất răng & phục hình", "Mất răng có cần làm răng giả không?",
     "Nên phục hồi răng đã mất, vì khoảng trống làm răng bên cạnh nghiêng đổ, răng đối diện trồi xuống và ăn nhai kém. "
     "Các cách thường dùng là hàm tháo lắp, cầu răng và cấy ghép implant. "
     "Nha sĩ sẽ khám và tư vấn cách phù hợp với sức khỏe và điều kiện của bạn.",
     "mất răng; làm răng giả; trồng răng; cầu răng; hàm tháo lắp"),
    ("Mất răng & phục hình", "Cấy ghép implant có phù hợp với người bị tiểu đường không?",
     "Người bị đái tháo đường kiểm soát đường huyết tốt vẫn có thể cấy implant. "
     "Khi đường huyết cao kéo dài, vết thương lành chậm và nguy cơ nhiễm trùng, thất bại implant tăng. "
     "Hãy báo cho nha sĩ kết quả HbA1c gần nhất và thuốc đang dùng; hút thuốc lá cũng làm tăng nguy cơ thất bại.",
     "implant; cấy ghép răng; trồng răng implant; tiểu đường trồng răng"),
    ("Mất răng & phục hình", "Vệ sinh hàm giả tháo lắp như thế nào?",
     "Tháo hàm ra chải sạch sau bữa ăn bằng bàn chải mềm và nước, không dùng kem đánh răng có hạt mài. "
     "Buổi tối nên tháo hàm khi ngủ, ngâm trong nước sạch hoặc dung dịch ngâm hàm. "
     "Nếu hàm lỏng, cấn đau hoặc gây loét, hãy đến nha sĩ chỉnh, đừng tự mài sửa.",
     "hàm giả; răng giả tháo lắp; vệ sinh răng giả"),
    # --- Khác
    ("Bệnh toàn thân & răng miệng", "Người bị tiểu đường cần chăm sóc răng miệng thế nào?",
     "Đái tháo đường làm tăng nguy cơ viêm nướu, viêm nha chu và nhiễm trùng trong miệng, và ngược lại viêm nha chu làm đường huyết khó kiểm soát hơn. "
     "Bạn nên chải răng, dùng chỉ nha khoa mỗi ngày, khám răng ít nhất 6 tháng một lần và báo cho nha sĩ biết mình bị đái tháo đường. "
     "Giữ đường huyết ổn định giúp nướu khỏe và vết thương trong miệng mau lành.",
     "tiểu đường răng miệng; đái tháo đường nướu; tiểu đường viêm lợi"),
    ("Bệnh toàn thân & răng miệng", "Bị nhiệt miệng (loét miệng) bao lâu thì khỏi?",
     "Nhiệt miệng thông thường tự lành sau khoảng 7–14 ngày. "
     "Bạn nên tránh đồ cay nóng, chua, giữ miệng sạch và có thể dùng thuốc bôi giảm đau tại chỗ theo hướng dẫn của dược sĩ. "
     "Nếu vết loét kéo dài quá 2 tuần, rất to, tái phát liên tục hoặc kèm sốt, sụt cân, hãy đi khám để loại trừ bệnh khác.",
     "nhiệt miệng; loét miệng; lở miệng; vết loét trong miệng"),
    ("Bệnh toàn thân & răng miệng", "Khi nào đau răng cần đi cấp cứu ngay?",
     "Hãy đến cơ sở cấp cứu ngay nếu đau răng kèm sưng lan nhanh ra má, mắt, dưới hàm hoặc cổ, khó há miệng, khó nuốt, khó thở, hoặc sốt cao. "
     "Đây có thể là nhiễm trùng lan rộng, cần điều trị khẩn cấp. "
     "Nếu khó thở, gọi 115 ngay. "
     "Chấn thương mặt kèm chảy máu nhiều hoặc rơi răng vĩnh viễn cũng cần được xử trí ngay: răng vĩnh viễn bị rơi cần cắm lại hoặc giữ trong sữa và đến nha sĩ trong vòng vài chục phút.",
     "cấp cứu nha khoa; sưng mặt; sưng cổ; khó thở do răng; đau răng sốt cao"),
    ("Bệnh toàn thân & răng miệng", "Nghiến răng khi ngủ có hại không?",
     "Nghiến răng kéo dài có thể làm mòn, mẻ răng, ê buốt, mỏi hàm và đau đầu buổi sáng. "
     "Nha sĩ có thể làm máng nhai đeo ban đêm để bảo vệ răng. "
     "Giảm căng thẳng, hạn chế cà phê và rượu buổi tối cũng giúp ích; nếu kèm ngáy to, ngưng thở khi ngủ, nên khám thêm chuyên khoa.",
     "nghiến răng; nghiến răng khi ngủ; mòn răng; máng nhai"),
]
URGENT_CODES: frozenset[str] = frozenset({"NK-012", "NK-014", "NK-018", "NK-025", "NK-042"})
